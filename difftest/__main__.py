import sys

from difftest.cli import main

sys.exit(main())
