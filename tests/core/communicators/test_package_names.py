"""ChainerMN's names stand where its users look for them, without importing mpi4py."""

import subprocess
import sys


def test_chainermn_names_are_exported_without_importing_mpi4py():
    code = ('import sys\n'
            'from cvzoo.core import communicators\n'
            'names = [communicators.create_communicator, communicators.scatter_dataset,\n'
            '         communicators.create_multi_node_optimizer,\n'
            '         communicators.create_multi_node_evaluator]\n'
            "assert all(callable(n) for n in names)\n"
            "assert 'mpi4py' not in sys.modules\n")
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
