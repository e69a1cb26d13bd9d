import sys

from magma_core.cli import main

sys.exit(main())
