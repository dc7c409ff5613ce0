"""The publisher's own process (``python -m streamv1.translator.cli.publisher``), which
``streamv1 tail --publish`` starts: :func:`translator.tail.publisher_process.main`,
its status the process's."""

import sys

from streamv1.translator.tail.publisher_process import main

sys.exit(main())
