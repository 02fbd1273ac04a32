"""viewcopy's, not jupyter_client's: keeps viewcopy's suite out of tests/, and where
VIEWCOPY_CONTRACT_MANAGER names a manager, swaps it in (tests/support/kernel_manager_contract.py;
README.md says how to run them)."""

import os
from pathlib import Path

collect_ignore = ["tests"]  # a path given on pytest's command line is collected all the same

if os.environ.get("VIEWCOPY_CONTRACT_MANAGER"):
    from support import kernel_manager_contract as _contract
    from support.kernel_manager_contract import (  # noqa: F401  the plugin's hooks and fixture
        jupyter_client_root,
        pytest_configure,
        pytest_fixture_setup,
        pytest_report_header,
        pytest_runtest_call,
        pytest_runtest_protocol,
        pytest_runtest_setup,
        pytest_runtest_teardown,
        pytest_sessionfinish,
        pytest_sessionstart,
    )

    _contract.install(os.environ["VIEWCOPY_CONTRACT_MANAGER"], Path(__file__).parent)
