"""The robot description shipped with rbd_control: the default 6-DoF arm ``rbd_arm``.

    default_arm_urdf() -> str       the URDF text
    default_arm_path() -> str       a filesystem path to it (for launch files, ``xacro``-free
                                    tools)

The URDF is read through importlib.resources so it works from a source checkout, a wheel and
an ament install alike.
"""
from importlib import resources

DEFAULT_ARM_FILE = "rbd_arm.urdf"


def default_arm_urdf() -> str:
    """Return the URDF XML of the default arm."""
    return resources.files(__name__).joinpath(DEFAULT_ARM_FILE).read_text(encoding="utf-8")


def default_arm_path() -> str:
    """Return a filesystem path to the default arm's URDF.

    Packages installed as plain directories (source trees, pip and colcon installs) have a
    real file; zipped installs are not supported here because launch files need a path.
    """
    path = resources.files(__name__).joinpath(DEFAULT_ARM_FILE)
    if not path.is_file():
        raise FileNotFoundError(f"default arm URDF missing from the package: {path}")
    return str(path)
