import sys

from kspread.workflow.cli import main

sys.exit(main())
