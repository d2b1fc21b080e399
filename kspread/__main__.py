import sys

from kspread.cli import main

sys.exit(main())
