"""rbd_controller whose state path takes 0.3 s to build, as on a machine so loaded that the
node's other threads run in between (its start-up order must not depend on being quick)."""
import sys
import time

from rbd_control.ros.controller import node

_build = node.StatePath.__init__


def _slow_build(self, *args, **kwargs):
    time.sleep(0.3)
    _build(self, *args, **kwargs)


node.StatePath.__init__ = _slow_build

if __name__ == '__main__':
    sys.exit(node.main())
