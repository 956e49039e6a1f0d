"""Which convention a BVH file's position channels follow ("offset+channel" or "channel"),
decided from the file itself for load(positions="auto").

Only joints with position channels say anything, and only on the axes where their OFFSET is
not zero (there both readings agree exactly). On such an axis, the channel's values (the median
over the frames, so that a few frames of motion do not decide) divided by the OFFSET sit near 1
when the channel holds the whole translation, near 0 when it holds a change added to the OFFSET.
The joints below the root vote first: their translation rarely moves, so the ratio is sharp. The
root, whose position channels carry the clip's travel, votes only where no other joint can: on
its axes with an OFFSET (the vertical one, typically: hip height), which travel over the ground
leaves alone.
"""
import numpy as np

from ._bvh_format import _POSITIONS

__all__ = ["detect_convention"]

#: A ratio within this of 1 (or of 0) reads as the whole translation (or as an added change).
RATIO_TOLERANCE = 0.25
#: An OFFSET component smaller than this fraction of the skeleton's largest OFFSET says nothing.
OFFSET_FLOOR = 1e-3


def _votes(motion, offsets, channels, joints, floor):
    """{joint: "channel" | "offset+channel" | None} for `joints` with informative axes."""
    votes = {}
    first_column = np.cumsum([0] + [len(ch) for ch in channels])
    for j in joints:
        ratios = []
        for k, name in enumerate(channels[j]):
            if name not in _POSITIONS:
                continue
            offset = offsets[j, _POSITIONS[name]]
            if abs(offset) <= floor:
                continue
            ratios.append(float(np.median(motion[:, first_column[j] + k].astype(np.float64))) / offset)
        if not ratios:
            continue
        ratios = np.array(ratios)
        if (np.abs(ratios - 1) <= RATIO_TOLERANCE).all():
            votes[j] = "channel"
        elif (np.abs(ratios) <= RATIO_TOLERANCE).all():
            votes[j] = "offset+channel"
        else:
            votes[j] = None
    return votes


def detect_convention(motion, offsets, channels, parents, names):
    """(convention, note): the convention the file's position channels follow, and a sentence
    for the clip's notes (None when the file reads as it always has, or says nothing).
    motion: (F, C) the file's values; offsets (J, 3); channels, parents, names as a Clip's."""
    if len(motion) == 0:
        return "offset+channel", None
    scale = float(np.abs(offsets).max()) if offsets.size else 0.0
    floor = OFFSET_FLOOR * scale
    with_positions = [j for j, ch in enumerate(channels) if any(c in _POSITIONS for c in ch)]
    votes = _votes(motion, offsets, channels, [j for j in with_positions if parents[j] >= 0], floor)
    who = "joints below the root"
    if not votes:
        votes = _votes(motion, offsets, channels, [j for j in with_positions if parents[j] < 0], floor)
        who = "root(s)"
    decided = set(votes.values())
    if decided == {"channel"}:
        listed = ", ".join(names[j] for j in list(votes)[:3]) + (", ..." if len(votes) > 3 else "")
        return "channel", (f"position channels read as whole local translations (positions='channel'): those of "
                           f"the {who} hold their OFFSETs ({len(votes)} joint(s): {listed})")
    if decided in ({"offset+channel"}, set()):
        return "offset+channel", None
    return "offset+channel", (f"position channels read as added to the OFFSETs (positions='offset+channel'), "
                              f"undecided: the position channels of the {who} hold neither all their OFFSETs "
                              f"nor all changes near zero; pass positions= to choose")
