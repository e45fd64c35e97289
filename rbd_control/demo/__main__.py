import sys

from rbd_control.demo.cli import main

sys.exit(main())
