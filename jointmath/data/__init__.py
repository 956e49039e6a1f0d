"""The BVH clips embedded in the package, for examples and first steps.

``sample_01_01.bvh`` is an excerpt of the CMU Graphics Lab Motion Capture Database's clip 01_01
(its first 381 frames at 120 fps; the attribution is in ``sample_01_01.bvh.source.txt`` beside
it).
"""
import os
from importlib import resources

__all__ = ["clip_paths", "sample_clip_path"]

#: File name of the embedded sample clip.
SAMPLE_CLIP = "sample_01_01.bvh"


def sample_clip_path() -> str:
    """Path of the embedded sample clip.

    Returns
    -------
    str
        The path of ``sample_01_01.bvh`` inside the installed package: an excerpt of the CMU
        clip 01_01, 381 frames at 120 frames per second, 31 joints.

    See Also
    --------
    clip_paths : every embedded clip, or the clips of a folder.
    jointmath.bvh.load : read it into a Clip.

    Examples
    --------
    >>> from jointmath import bvh, data
    >>> clip = bvh.load(data.sample_clip_path())
    >>> clip.n_frames, clip.n_joints, round(clip.fps)
    (381, 31, 120)
    """
    return str(resources.files(__name__).joinpath(SAMPLE_CLIP))


def clip_paths(folder: "str | os.PathLike[str] | None" = None) -> list[str]:
    """Paths of BVH clips: the embedded ones, or those of a folder.

    Parameters
    ----------
    folder : str or os.PathLike, optional
        A folder whose ``*.bvh`` files (any case of the extension, not recursive) are listed.
        Default: the package's embedded clips.

    Returns
    -------
    list of str
        The clips' paths, sorted.

    Raises
    ------
    FileNotFoundError
        If `folder` does not exist.
    NotADirectoryError
        If `folder` is not a folder.

    See Also
    --------
    sample_clip_path : the embedded sample clip alone.

    Examples
    --------
    >>> import os
    >>> from jointmath import data
    >>> [os.path.basename(path) for path in data.clip_paths()]
    ['sample_01_01.bvh']
    >>> data.clip_paths(os.path.dirname(data.sample_clip_path())) == data.clip_paths()
    True
    """
    if folder is None:
        folder = os.path.dirname(sample_clip_path())
    folder = os.fspath(folder)
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if name.lower().endswith(".bvh") and os.path.isfile(os.path.join(folder, name)))
