"""Exception classes that cvzoo raises for user mistakes and bad files.

They subclass the built-in exception a user would expect (ValueError, OSError), so
``except ValueError`` keeps working, while ``except cvzoo.errors.CvzooError`` catches
everything cvzoo raises on purpose.
"""


class CvzooError(Exception):
    """Base class of every exception cvzoo raises on purpose."""


class DeviceMismatchError(CvzooError, ValueError):
    """An operation got arrays that live on different devices."""


class WeightLoadError(CvzooError, ValueError):
    """A weight file does not fit the model (missing, unexpected or mis-shaped keys)."""


class CorruptFileError(CvzooError, OSError):
    """A file (image, annotation, weights) is truncated, malformed or not what it claims."""


class DownloadError(CvzooError, OSError):
    """A file could not be fetched or did not match its sha256."""


class AnnotationError(CorruptFileError, ValueError):
    """An annotation file holds a value that cannot be right (a NaN coordinate, a box
    outside its image, an id that points nowhere); the message names the file and entry."""


class UsageError(CvzooError, ValueError):
    """A command or function was called with an argument that cannot be right (an
    unknown name, a missing file, options that do not go together); the message names
    the argument."""


class MissingFileError(CvzooError, FileNotFoundError):
    """A file or folder that was named (an argument, a dataset's list, a path inside an
    annotation) does not exist; the message names it and what was expected there."""


class GraphCaptureError(CvzooError, RuntimeError):
    """A training step could not be captured as a CUDA graph (a host synchronisation, a
    shape that depends on the data, host-side randomness inside it); the message names the
    operation and its call site."""
