"""The training image's trainer (fixtures/training-image/train.py), run for real on the CPU.

Each scenario starts ``train.py`` in a subprocess and reads its JSON log lines: an uninterrupted
run (the reference), a run stopped by SIGTERM mid-training and resumed, a SIGINT, SIGKILL in the
middle of a checkpoint save, and two ranks training data-parallel with Gloo. Metrics are scraped
over HTTP and parsed with prometheus_client's own parser.

They need PyTorch and prometheus_client (the `image` extra: ``pip install -e ".[test,image]"``)
and are skipped, with that reason, on an install without them.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

REASON = 'the training image tests need PyTorch and prometheus_client: pip install -e ".[test,image]"'
torch = pytest.importorskip("torch", reason=REASON)
pytest.importorskip("prometheus_client", reason=REASON)
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TRAIN = REPO / "fixtures" / "training-image" / "train.py"
EPOCHS, STEPS_PER_EPOCH, BATCH = 3, 20, 32
TOTAL = EPOCHS * STEPS_PER_EPOCH
RUN = ["--epochs", str(EPOCHS), "--steps-per-epoch", str(STEPS_PER_EPOCH), "--batch-size", str(BATCH),
       "--hidden-size", "32", "--checkpoint-every", "7", "--log-every", "1", "--metrics-port", "-1", "--seed", "7"]
TIMEOUT = 120
LABELS = {"model": "mlp-regressor", "version": "1.2.3", "job_name": "test-run"}


class Trainer:
    """``train.py`` in a subprocess; its JSON log lines are read as they come."""

    def __init__(self, checkpoint_dir: Path, *extra: str, env: dict[str, str] | None = None):
        self.stderr = checkpoint_dir.parent / f"{checkpoint_dir.name}-{time.monotonic_ns()}.stderr"
        self._stderr = open(self.stderr, "w")
        self.process = subprocess.Popen(
            [sys.executable, str(TRAIN), "--checkpoint-dir", str(checkpoint_dir), *RUN, *extra],
            stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.events: list[dict] = []
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))
        self._lines.put(None)

    def wait_for(self, predicate, timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                self.kill()
                raise AssertionError(f"timed out waiting; events so far: {self.events[-5:]}") from None
            if event is None:
                self._lines.put(None)
                raise AssertionError(f"the trainer ended first (status {self.process.wait()}):\n{self.errors()}")
            self.events.append(event)
            if predicate(event):
                return event

    def finish(self, timeout: float = TIMEOUT) -> int:
        status = self.process.wait(timeout=timeout)
        while True:
            event = self._lines.get(timeout=timeout)
            if event is None:
                break
            self.events.append(event)
        self._stderr.close()
        return status

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()

    def errors(self) -> str:
        return self.stderr.read_text() if self.stderr.exists() else ""

    def of(self, name: str) -> list[dict]:
        return [e for e in self.events if e["event"] == name]

    def losses(self) -> dict[int, float]:
        return {e["step"]: e["loss"] for e in self.of("step")}


def load(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


def assert_complete(state: dict, step: int) -> None:
    """A checkpoint from which training can resume exactly at ``step``."""
    assert {"model", "optimizer", "scheduler", "step", "epoch", "rng"} <= set(state)
    assert state["step"] == step and state["epoch"] == step // STEPS_PER_EPOCH
    assert state["scheduler"]["last_epoch"] == step
    assert {int(s["step"]) for s in state["optimizer"]["state"].values()} == {step}
    assert len(state["rng"]) == 1 and {"python", "torch"} <= set(state["rng"][0])
    assert all(torch.isfinite(t).all() for t in state["model"].values())


# ---------------------------------------------------------------------------------------------
# Scenarios (each run once per module)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    folder = tmp_path_factory.mktemp("baseline") / "checkpoints"
    trainer = Trainer(folder)
    status = trainer.finish()
    assert status == 0, trainer.errors()
    return trainer, folder


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """SIGTERM after step 10 while /metrics is scraped; then the same command again. 30 ms per
    batch leaves the 50 steps after step 10 1.5 s: the piped log and the scrape may lag on a
    loaded machine, and the run must not end before the signal."""
    folder = tmp_path_factory.mktemp("interrupted") / "checkpoints"
    first = Trainer(folder, "--data-latency-ms", "30", "--metrics-port", "0", "--model-version", LABELS["version"],
                    "--job-name", LABELS["job_name"])
    port = first.wait_for(lambda e: e["event"] == "metrics")["port"]
    first.wait_for(lambda e: e["event"] == "step" and e["step"] >= 10)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        exposition = response.read().decode()
    first.process.send_signal(signal.SIGTERM)
    status = first.finish()
    left = sorted(p.name for p in folder.iterdir())
    saved = load(folder / "latest.pt")
    second = Trainer(folder)
    resumed_status = second.finish()
    return {"first": first, "status": status, "exposition": exposition, "left": left, "saved": saved,
            "second": second, "resumed_status": resumed_status}


# ---------------------------------------------------------------------------------------------
# Uninterrupted


def test_uninterrupted_run_trains_and_leaves_a_final_checkpoint(baseline):
    trainer, folder = baseline
    losses = trainer.losses()
    assert sorted(losses) == list(range(1, TOTAL + 1))
    assert losses[TOTAL] < losses[1] / 2, "the model should learn"
    assert [e["step"] for e in trainer.of("checkpoint")] == [7, 14, 21, 28, 35, 42, 49, 56, TOTAL]
    assert sorted(p.name for p in folder.iterdir()) == ["latest.pt"]
    assert_complete(load(folder / "latest.pt"), TOTAL)
    finished = trainer.of("finished")[0]
    assert finished["step"] == TOTAL and math.isfinite(finished["eval_loss"])
    assert trainer.of("start")[0]["device"] == ("cuda:0" if torch.cuda.is_available() else "cpu")


# ---------------------------------------------------------------------------------------------
# Metrics


def test_metrics_are_exposed_with_stable_labels_only(interrupted):
    families = {f.name: f for f in text_string_to_metric_families(interrupted["exposition"])}
    expected = {
        "ml_training_samples": "counter", "ml_training_steps": "counter",
        "ml_training_step_duration_seconds": "histogram", "ml_training_checkpoint_duration_seconds": "histogram",
        "ml_training_data_wait_seconds": "histogram", "ml_training_loss": "gauge",
        "ml_training_learning_rate": "gauge", "ml_training_last_checkpoint_timestamp_seconds": "gauge",
    }
    assert {name: families[name].type for name in expected if name in families} == expected
    for name in expected:
        for sample in families[name].samples:
            labels = {k: v for k, v in sample.labels.items() if k != "le"}
            assert labels == LABELS, (sample.name, sample.labels)

    def value(sample_name: str) -> float:
        (sample,) = [s for f in families.values() for s in f.samples if s.name == sample_name]
        return sample.value

    steps = value("ml_training_steps_total")
    assert steps >= 10
    assert value("ml_training_samples_total") in (steps * BATCH, (steps - 1) * BATCH)  # scraped between the two
    assert value("ml_training_step_duration_seconds_count") in (steps, steps - 1)
    waits = value("ml_training_data_wait_seconds_count")
    assert waits >= steps and value("ml_training_data_wait_seconds_sum") >= 0.025 * waits  # the 30 ms per batch
    assert value("ml_training_checkpoint_duration_seconds_count") >= 1  # the one at step 7
    assert value("ml_training_last_checkpoint_timestamp_seconds") > time.time() - 600
    assert math.isfinite(value("ml_training_loss")) and 0 < value("ml_training_learning_rate") <= 0.01


# ---------------------------------------------------------------------------------------------
# SIGTERM, then resume


def test_sigterm_saves_a_complete_checkpoint_and_exits_143(interrupted):
    first = interrupted["first"]
    assert interrupted["status"] == 143, first.errors()
    assert interrupted["left"] == ["latest.pt"], "the temporary file must not be left behind"
    (on_signal,) = [e for e in first.of("checkpoint") if e["reason"] == "signal"]
    step = on_signal["step"]
    assert 10 <= step < TOTAL and step == max(first.losses())  # saved after the step in progress
    assert first.of("signal") == [{"event": "signal", "signal": "SIGTERM"}]
    assert_complete(interrupted["saved"], step)


def test_resume_continues_the_same_trajectory(interrupted, baseline):
    second, reference = interrupted["second"], baseline[0]
    assert interrupted["resumed_status"] == 0, second.errors()
    saved = interrupted["saved"]["step"]
    assert second.of("resumed") == [{"event": "resumed", "step": saved, "epoch": saved // STEPS_PER_EPOCH}]
    assert min(second.losses()) == saved + 1 and max(second.losses()) == TOTAL
    expected = reference.losses()
    for step, loss in {**interrupted["first"].losses(), **second.losses()}.items():
        assert loss == pytest.approx(expected[step], rel=1e-6, abs=1e-9), step
    done, reference_done = second.of("finished")[0], reference.of("finished")[0]
    assert done["loss"] == pytest.approx(reference_done["loss"], rel=1e-6)
    assert done["eval_loss"] == pytest.approx(reference_done["eval_loss"], rel=1e-6)


def test_sigint_also_checkpoints_and_exits_143(tmp_path):
    folder = tmp_path / "checkpoints"
    trainer = Trainer(folder, "--data-latency-ms", "15")
    trainer.wait_for(lambda e: e["event"] == "step" and e["step"] >= 3)
    trainer.process.send_signal(signal.SIGINT)
    assert trainer.finish() == 143, trainer.errors()
    step = trainer.of("checkpoint")[-1]["step"]
    # after the step in progress; however far the piped log lagged, the last save is the signal's
    assert trainer.of("checkpoint")[-1]["reason"] == "signal" and step == max(trainer.losses()) < TOTAL
    assert sorted(p.name for p in folder.iterdir()) == ["latest.pt"]
    assert_complete(load(folder / "latest.pt"), step)


# ---------------------------------------------------------------------------------------------
# SIGKILL during a save


def test_kill_during_a_save_never_leaves_a_corrupt_latest(tmp_path):
    """SIGKILL while a save is being written (the temporary file exists, ``latest.pt`` is not yet
    replaced): ``latest.pt`` is still the last checkpoint the trainer reported, whole, and a later
    start removes the torn temporary file and resumes from it.

    The kill is timed by watching the folder, never the log: the log reaches the test through a
    pipe and a thread, and on a slow machine it lags by whole saves. Which save the kill lands in
    does not matter; the steps expected are read from the trainer's own events afterwards."""
    big = ["--hidden-size", "2048", "--checkpoint-every", "1", "--epochs", "1", "--steps-per-epoch", "6"]
    torn = torn_step = None
    for attempt in range(5):
        folder = tmp_path / f"attempt-{attempt}"
        temporary, latest = folder / "latest.pt.tmp", folder / "latest.pt"
        trainer = Trainer(folder, *big)
        deadline = time.monotonic() + TIMEOUT
        # A save after the first: latest.pt is whole and the next one is being written beside it.
        while not (temporary.exists() and latest.exists()) and time.monotonic() < deadline:
            if trainer.process.poll() is not None:
                break
        trainer.kill()
        assert trainer.finish() == -signal.SIGKILL, trainer.errors()
        state = load(latest)  # never raises: latest.pt is always whole
        assert {"model", "optimizer", "scheduler", "rng"} <= set(state)
        reported = [e["step"] for e in trainer.of("checkpoint")]
        begun = [e["step"] for e in trainer.of("saving")]
        if temporary.exists():
            # the save in progress began after the last one reported had ended
            assert reported and state["step"] == reported[-1] < begun[-1], "the torn save replaced latest.pt"
            torn, torn_step = folder, state["step"]
            break
        # the kill fell between the rename and the log line: latest.pt is the save just begun
        assert state["step"] in reported[-1:] + begun[-1:]
    assert torn is not None, "no kill landed inside a save in 5 attempts"
    resumed = Trainer(torn, *big)
    assert resumed.finish() == 0, resumed.errors()
    assert resumed.of("stale-temporary") and resumed.of("resumed")[0]["step"] == torn_step
    assert sorted(p.name for p in torn.iterdir()) == ["latest.pt"]
    assert load(torn / "latest.pt")["step"] == 6


# ---------------------------------------------------------------------------------------------
# Two ranks (Gloo): one stop for all, one checkpoint, a synchronised resume


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ranks(folder: Path) -> list[Trainer]:
    """Two ranks of 40 steps; 40 ms per batch leaves a signal after step 5 over a second to land
    before the run ends, however far the piped log lags on a loaded machine."""
    port = str(_free_port())
    return [Trainer(folder, "--data-latency-ms", "40", "--epochs", "2", env={"WORLD_SIZE": "2", "RANK": str(rank), "LOCAL_RANK": "0",
                                                          "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port})
            for rank in range(2)]


def test_two_ranks_stop_together_and_resume_from_one_checkpoint(tmp_path):
    folder = tmp_path / "checkpoints"
    ranks = _ranks(folder)
    ranks[1].wait_for(lambda e: e["event"] == "step" and e["step"] >= 5)
    ranks[1].process.send_signal(signal.SIGTERM)  # only one pod is told to stop
    assert [r.finish() for r in ranks] == [143, 143], ranks[0].errors() + ranks[1].errors()
    stopped = {max(r.losses()) for r in ranks}
    assert len(stopped) == 1, "both ranks stop after the same step"
    assert [e["step"] for e in ranks[0].of("checkpoint")][-1] == stopped.pop()
    assert ranks[1].of("checkpoint") == [], "only rank 0 writes"
    state = load(folder / "latest.pt")
    assert state["world_size"] == 2 and len(state["rng"]) == 2
    again = _ranks(folder)
    assert [r.finish() for r in again] == [0, 0], again[0].errors() + again[1].errors()
    assert {r.of("resumed")[0]["step"] for r in again} == {state["step"]}
    evaluations = {r.of("finished")[0]["eval_loss"] for r in again}
    assert len(evaluations) == 1, "the replicas hold the same model"


# ---------------------------------------------------------------------------------------------
# The checkpoint functions in-process


@pytest.fixture(scope="module")
def module():
    spec = importlib.util.spec_from_file_location("training_image_train", TRAIN)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # dataclasses look their module up
    try:
        spec.loader.exec_module(loaded)
        yield loaded
    finally:
        sys.modules.pop(spec.name, None)


def test_a_torn_temporary_file_is_removed_and_never_read(module, tmp_path, capsys):
    module.save_checkpoint(tmp_path, {"format": module.FORMAT, "step": 5})
    (tmp_path / module.TEMPORARY).write_bytes(b"PK\x03\x04 half a zip archive")
    state = module.load_checkpoint(tmp_path, torch.device("cpu"))
    assert state == {"format": module.FORMAT, "step": 5}
    assert not (tmp_path / module.TEMPORARY).exists()
    assert json.loads(capsys.readouterr().out)["event"] == "stale-temporary"
    assert module.load_checkpoint(tmp_path / "empty", torch.device("cpu")) is None


def test_epoch_order_depends_on_seed_and_epoch_only(module):
    full = module.EpochBatches(256, 32, seed=7, epoch=2, start=0, rank=0, world=1).batches
    assert full == module.EpochBatches(256, 32, seed=7, epoch=2, start=0, rank=0, world=1).batches
    assert module.EpochBatches(256, 32, seed=7, epoch=2, start=3, rank=0, world=1).batches == full[3:]
    assert full != module.EpochBatches(256, 32, seed=7, epoch=3, start=0, rank=0, world=1).batches
    shards = [module.EpochBatches(256, 32, seed=7, epoch=2, start=0, rank=r, world=2).batches for r in range(2)]
    assert sorted(i for shard in shards for batch in shard for i in batch) == list(range(256))
