import io

from cvzoo.core.training.extensions.log_report import LogReport
from cvzoo.core.training.extensions.print_report import PrintReport


def test_prints_a_header_and_one_row_per_entry(make_trainer):
    trainer = make_trainer(stop=(6, 'iteration'))
    out = io.StringIO()
    trainer.extend(LogReport(trigger=(2, 'iteration')))
    trainer.extend(PrintReport(['iteration', 'main/loss', 'missing'], out=out))
    trainer.run()
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ['iteration', 'main/loss', 'missing']
    assert [int(line.split()[0]) for line in lines[1:]] == [2, 4, 6]
    log = trainer.get_extension('LogReport').log
    assert float(lines[1].split()[1]) == float(f"{log[0]['main/loss']:.6g}")
