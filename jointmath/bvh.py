"""BVH motion-capture files: load into a Clip, save back.

Our own parser: the HIERARCHY block is tokenised in Python (it is small); the MOTION block is
read in C in one pass straight into float32 (jointmath/_motion.c: correctly rounded like
strtof), and the joints are built from it in C in one more pass. A file given by its path is
read into memory in one call, not memory-mapped (another program truncating a mapped file would
crash the process); one that changes while it is read raises ValueError. Lines end at \\n,
\\r\\n or \\r only; tabs, exponents and leading-dot floats are accepted; numbers are ASCII (no "inf", "nan", "1_000" or full-width digits). A malformed or truncated
file raises ValueError naming the file and line; no partial Clip is ever returned. More frame
lines than "Frames:" declares (some exporters add one) keeps the declared frames and warns with
BVHWarning; so does a joint name that is not UTF-8 (read as cp1252). A skeleton without any
channel (no CHANNELS values in any joint) has frames without values: each frame is one blank
line, so "Frames: N" needs N lines after "Frame Time:" (save writes them; more are ignored).

Rotations: a joint's Euler channels, in the order they appear, are intrinsic rotations, so
"Zrotation Xrotation Yrotation" means R = Rz(z) Rx(x) Ry(y) (scipy's from_euler("ZXY", ...),
degrees). Translations: a joint's translation is its OFFSET plus its position channels
(Xposition, Yposition, Zposition; a missing one counts as 0), in every frame; or, in the
"channel" convention of Blender's exporter, the position channels themselves on their axes
(load(positions=...) chooses, "auto" by default; Clip.position_channels records it; save()
writes it back).

The modules behind it, one concern each: _bvh_clip (the Clip model), _bvh_format (channel names,
channels -> joints), _bvh_continuity (Euler channels computed from joints), _bvh_read (load) and
_bvh_write (save).
"""
from ._bvh_clip import Clip, resample
from ._bvh_continuity import CONTINUED_ANGLE_MAX, EULER_JUMP
from ._bvh_format import FRAME_TIME_RANGE, POSITION_CONVENTIONS, joints_from_motion
from ._bvh_read import BVHWarning, load
from ._bvh_read import _read  # the command's reader: warnings as text (jointmath/_job.py)
from ._bvh_write import MAX_INDENT, save
from ._bvh_write import _save_frames  # the command's writer: a clip with other frames (jointmath/_job.py)

__all__ = ["BVHWarning", "Clip", "joints_from_motion", "load", "resample", "save"]
