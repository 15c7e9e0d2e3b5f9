"""``python -m fabricctl``: the same command as the ``fabricctl`` console script."""

import sys

from fabricctl.main import main

sys.exit(main())
