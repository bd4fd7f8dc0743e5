"""gradbook keeps torch's warning about its own forward-mode internals off the pages, and only
that warning: a reader's own use of the deprecated API still warns."""
import subprocess
import sys
import textwrap

from conftest import BOOK

PROGRAM = textwrap.dedent('''
    import sys
    import warnings
    sys.path.insert(0, {book!r})
    import torch
    import gradbook

    # Turned into an error, the warning would stop jvp if the chapters met it.
    warnings.simplefilter("error", FutureWarning)
    torch.func.jvp(lambda x: (x * x).sum(), (torch.ones(3),), (torch.ones(3),))
    print("jvp: quiet")

    def reader_function(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        torch.jit.script(reader_function)
    print("reader's script warns:", any("deprecated" in str(w.message) for w in caught))
''')


def test_forward_mode_is_quiet_and_a_readers_jit_script_still_warns(tmp_path):
    script = tmp_path / "program.py"  # TorchScript reads the function's source from its file
    script.write_text(PROGRAM.format(book=str(BOOK)))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "jvp: quiet"
    import torch

    release = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    # torch.jit.script is deprecated with a warning from 2.14 on.
    assert lines[1] == f"reader's script warns: {release >= (2, 14)}"
