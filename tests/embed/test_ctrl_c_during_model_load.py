"""Ctrl-C while a model loads ends the command, even when a native import swallows the
KeyboardInterrupt and reports an ImportError instead (as onnxruntime importing numpy
does): the load must not read as "model unavailable" and carry on."""

from __future__ import annotations

import os
import signal

import pytest

from cairn.embed.interrupts import interrupts_kept


def _import_that_swallows_ctrl_c() -> None:
    try:
        os.kill(os.getpid(), signal.SIGINT)  # a real signal, delivered here
    except KeyboardInterrupt:
        raise ImportError("import numpy failed") from None


def test_a_swallowed_ctrl_c_during_a_load_is_a_ctrl_c() -> None:
    with pytest.raises(KeyboardInterrupt), interrupts_kept():
        _import_that_swallows_ctrl_c()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_failure_without_ctrl_c_stays_what_it_is() -> None:
    with pytest.raises(ImportError), interrupts_kept():
        raise ImportError("no such module")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
