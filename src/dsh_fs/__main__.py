"""``python -m dsh_fs``: the ``dsh-fs`` command line."""

import sys

from dsh_fs.cli import main

sys.exit(main())
