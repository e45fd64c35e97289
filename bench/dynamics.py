"""Dynamics speed beside Pinocchio, in one run: µs per call and ratios (median of repeats).

    python bench/dynamics.py            # full run, ~2 minutes
    python bench/dynamics.py --quick    # fewer repeats
    python bench/dynamics.py --only crba --only frame_jacobian   # those Panda rows alone

Ours and Pinocchio's calls are timed interleaved, repeat after repeat, on the same states, so
load on the machine hits both alike; the ratio of the medians is the figure to read. Times are
this thread's CPU time (time.thread_time), so a repeat during which the scheduler ran another
process is not charged for the wait; cache and frequency effects of load remain.
Not a test: these machines are noisy, so nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rbd_control.dynamics as rbd  # noqa: E402

TIMER = time.thread_time   # CPU time of this thread: waits for the CPU are not counted


def panda_urdf() -> str:
    import importlib.metadata
    dist = importlib.metadata.distribution("example-robot-data")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/"
                                 "panda_description/urdf/panda.urdf")).read_text()


def tree_urdf(parents: list[int], seed: int = 0, name: str = "tree") -> str:
    """Revolute joints with parent indices (-1 = base), random axes, origins and inertias."""
    rng = np.random.default_rng(seed)
    links = ['<link name="base"/>']
    joints = []
    for i, parent in enumerate(parents):
        mass = rng.uniform(0.5, 3.0)
        moments = rng.uniform(0.02, 0.03, 3)   # any two exceed the third
        com = " ".join(map(str, rng.normal(0, 0.05, 3)))
        links.append(
            f'<link name="l{i}"><inertial><origin xyz="{com}"'
            f' rpy="{" ".join(map(str, rng.uniform(-1, 1, 3)))}"/><mass value="{mass}"/>'
            f'<inertia ixx="{moments[0]}" iyy="{moments[1]}" izz="{moments[2]}" ixy="0" ixz="0"'
            f' iyz="0"/></inertial></link>')
        axis = rng.normal(size=3)
        parent_link = "base" if parent < 0 else f"l{parent}"
        joints.append(
            f'<joint name="j{i}" type="revolute"><parent link="{parent_link}"/>'
            f'<child link="l{i}"/><origin xyz="{" ".join(map(str, rng.uniform(-0.2, 0.2, 3)))}"'
            f' rpy="{" ".join(map(str, rng.uniform(-1, 1, 3)))}"/>'
            f'<axis xyz="{" ".join(map(str, axis / np.linalg.norm(axis)))}"/>'
            f'<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>')
    return f'<robot name="{name}">{"".join(links)}{"".join(joints)}</robot>'


def chain(n: int) -> list[int]:
    return list(range(-1, n - 1))


def tree30() -> list[int]:
    """A 30-DoF tree: a 6-joint trunk carrying four 6-joint branches (depth 12)."""
    parents = chain(6)
    for _ in range(4):
        start = len(parents)
        parents += [5] + list(range(start, start + 5))
    return parents


class Pair:
    """One robot loaded by both libraries, with random states in each one's layout."""

    def __init__(self, xml: str, states: int = 64):
        import pinocchio as pin
        self.pin = pin
        self.model = rbd.load_urdf(xml)
        self.pmodel = pin.buildModelFromXML(xml)
        self.pdata = self.pmodel.createData()
        assert self.pmodel.nq == self.model.nq, "benchmark robots have no continuous joints"
        # Pinocchio's joint order may differ: permute our states into its layout by name.
        order = [self.pmodel.getJointId(name) - 1 for name in self.model.joint_names]
        rng = np.random.default_rng(1)
        lower, upper = self.model.position_limits.T
        self.q = rng.uniform(np.maximum(lower, -3), np.minimum(upper, 3), (states, self.model.nq))
        self.qd, self.qdd = rng.normal(size=(2, states, self.model.nq))
        self.tau = np.array([rbd.rnea(self.model, *x) for x in zip(self.q, self.qd, self.qdd)])
        self.pq, self.pqd, self.pqdd, self.ptau = (np.zeros_like(x) for x in
                                                   (self.q, self.qd, self.qdd, self.tau))
        for ours, theirs in ((self.q, self.pq), (self.qd, self.pqd), (self.qdd, self.pqdd),
                             (self.tau, self.ptau)):
            theirs[:, order] = ours

    def calls(self):
        """name -> (ours, pinocchio), each a function of state index k."""
        m, pm, pd, pin = self.model, self.pmodel, self.pdata, self.pin
        q, qd, qdd, tau = self.q, self.qd, self.qdd, self.tau
        pq, pqd, pqdd, ptau = self.pq, self.pqd, self.pqdd, self.ptau
        return {
            "rnea": (lambda k: rbd.rnea(m, q[k], qd[k], qdd[k]),
                     lambda k: pin.rnea(pm, pd, pq[k], pqd[k], pqdd[k])),
            "gravity": (lambda k: rbd.gravity(m, q[k]),
                        lambda k: pin.computeGeneralizedGravity(pm, pd, pq[k])),
            "crba": (lambda k: rbd.crba(m, q[k]),
                     lambda k: pin.crba(pm, pd, pq[k])),
            "forward_dynamics vs aba": (lambda k: rbd.forward_dynamics(m, q[k], qd[k], tau[k]),
                                        lambda k: pin.aba(pm, pd, pq[k], pqd[k], ptau[k])),
        }


def task_space_rows(pair: Pair, repeats: int, number: int):
    return compare(pair, repeats, number, task_space_calls(pair))


def task_space_calls(pair: Pair, link: str = "panda_hand"):
    """frame_pose / frame_jacobian per call beside Pinocchio. A pose at a new q costs Pinocchio
    forwardKinematics + updateFramePlacement (updateFramePlacement alone only reads oMi).
    frame_jacobian is timed both as the function (a new J per call, as Pinocchio's binding
    returns) and as a prepared FrameJacobian (one J reused: no allocation per call)."""
    m, pm, pd, pin = pair.model, pair.pmodel, pair.pdata, pair.pin
    q, pq = pair.q, pair.pq
    frame = pm.getFrameId(link)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def pin_pose(k):
        pin.forwardKinematics(pm, pd, pq[k])
        return pin.updateFramePlacement(pm, pd, frame)

    # the documented per-state form at one link (API.md): prepared once, J reused
    jacobian = rbd.FrameJacobian(m, link)

    def pin_lambda(k):
        J = pin.computeFrameJacobian(pm, pd, pq[k], frame, lwa)
        return np.linalg.inv(J @ pin.computeMinverse(pm, pd, pq[k]) @ J.T)

    return {
        "frame_pose vs FK+updateFramePlacement": (lambda k: rbd.frame_pose(m, q[k], link),
                                                  pin_pose),
        "frame_jacobian vs computeFrameJacobian": (
            lambda k: rbd.frame_jacobian(m, q[k], link),
            lambda k: pin.computeFrameJacobian(pm, pd, pq[k], frame, lwa)),
        "FrameJacobian vs computeFrameJacobian": (
            lambda k: jacobian(q[k]),
            lambda k: pin.computeFrameJacobian(pm, pd, pq[k], frame, lwa)),
        "operational_space_inertia vs inv(J M^-1 J^T)": (
            lambda k: rbd.operational_space_inertia(m, q[k], link),
            pin_lambda),
    }


def per_call_us(function, states: int, number: int) -> float:
    def run():
        for k in range(states):
            function(k)
    return timeit.timeit(run, number=number, timer=TIMER) / (number * states) * 1e6


def compare(pair: Pair, repeats: int, number: int, calls=None):
    rows = []
    states = pair.q.shape[0]
    for name, (ours, theirs) in (calls or pair.calls()).items():
        ours_us, theirs_us = [], []
        for _ in range(repeats):
            ours_us.append(per_call_us(ours, states, number))
            theirs_us.append(per_call_us(theirs, states, number))
        o, t = statistics.median(ours_us), statistics.median(theirs_us)
        rows.append((name, o, t, o / t))
    return rows


def batch_rows(pair: Pair, repeats: int, N: int = 1000):
    m, pin = pair.model, pair.pin
    rng = np.random.default_rng(2)
    Q, QD, QDD = rng.uniform(-2, 2, (3, N, m.nq))
    pm, pd = pair.pmodel, pair.pdata
    order = [pm.getJointId(name) - 1 for name in m.joint_names]
    PQ, PQD, PQDD = (np.zeros_like(X) for X in (Q, QD, QDD))
    for X, P in ((Q, PQ), (QD, PQD), (QDD, PQDD)):
        P[:, order] = X

    def loop(f):
        def run():
            for k in range(N):
                f(k)
        return run

    cases = {
        "rnea_batch": (lambda: rbd.rnea_batch(m, Q, QD, QDD),
                       loop(lambda k: pin.rnea(pm, pd, PQ[k], PQD[k], PQDD[k]))),
        "gravity_batch": (lambda: rbd.gravity_batch(m, Q),
                          loop(lambda k: pin.computeGeneralizedGravity(pm, pd, PQ[k]))),
        "crba_batch": (lambda: rbd.crba_batch(m, Q),
                       loop(lambda k: pin.crba(pm, pd, PQ[k]))),
    }

    def ms(f):
        return statistics.median(timeit.timeit(f, number=1, timer=TIMER)
                                 for _ in range(repeats)) * 1e3

    rows = []
    for name, (ours, theirs) in cases.items():
        o, t = ms(ours), ms(theirs)
        rows.append((name, o, t, o / t))
    return rows


def scaling_rows(sizes, repeats: int):
    rows = []
    for n in sizes:
        pair = Pair(tree_urdf(chain(n), seed=n, name=f"chain{n}"), states=16)
        number = max(1, 2000 // n)
        calls = pair.calls()
        rnea_us = statistics.median(per_call_us(calls["rnea"][0], 16, number)
                                    for _ in range(repeats))
        crba_us = statistics.median(per_call_us(calls["crba"][0], 16, number)
                                    for _ in range(repeats))
        pin_rnea = statistics.median(per_call_us(calls["rnea"][1], 16, number)
                                     for _ in range(repeats))
        # the same in one batched call: no per-call overhead, so the O(n) cost shows alone
        Q = np.repeat(pair.q, 8, axis=0)
        batch_us = statistics.median(
            timeit.timeit(lambda: rbd.rnea_batch(pair.model, Q, Q, Q), number=number,
                          timer=TIMER)
            / (number * Q.shape[0]) * 1e6 for _ in range(repeats))
        rows.append((n, rnea_us, rnea_us / n * 1e3, batch_us / n * 1e3, crba_us,
                     crba_us / (n * n) * 1e3, rnea_us / pin_rnea))
    return rows


def startup_times():
    """Cold compile (empty numba cache) and warm start (cache filled), in fresh processes."""
    script = ("import time; t0 = time.perf_counter(); import numpy as np; "
              "import rbd_control.dynamics as d; m = d.load_urdf(open(%r).read()); "
              "d.rnea(m, np.zeros(m.nq), np.zeros(m.nq), np.zeros(m.nq)); "
              "print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache, tempfile.NamedTemporaryFile(
            "w", suffix=".urdf", delete=False) as urdf:
        urdf.write(panda_urdf())
        urdf.flush()
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        times = []
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", script % urdf.name], env=env,
                                 capture_output=True, text=True, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
        os.unlink(urdf.name)
    return times[0], min(times[1:])


def table(title, header, rows, formats):
    print(f"\n{title}")
    print("  " + "  ".join(f"{h:>{w}}" for h, (w, _) in zip(header, formats)))
    for row in rows:
        print("  " + "  ".join(f"{v:>{w}{f}}" for v, (w, f) in zip(row, formats)))


def only_rows(names, repeats, number):
    """The Panda per-call rows (joint space and task space) whose name starts with one of
    `names`, timed as in the full run: a short run for one change."""
    pair = Pair(panda_urdf())
    calls = {**pair.calls(), **task_space_calls(pair)}
    chosen = {name: call for name, call in calls.items() if name.startswith(tuple(names))}
    if not chosen:
        raise SystemExit(f"no row starts with {names}; rows: {', '.join(calls)}")
    table("Panda, one state per call", ("function", "ours µs", "pin µs", "ratio"),
          compare(pair, repeats, number, chosen), [(46, ""), (8, ".3f"), (8, ".3f"), (6, ".2f")])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="only the Panda per-call rows whose name starts with NAME "
                             "(repeatable; same repeats, no batches, scaling or start-up)")
    args = parser.parse_args()
    repeats, number = (3, 20) if args.quick else (9, 60)
    if args.only:
        only_rows(args.only, repeats, number)
        return

    import pinocchio
    print(f"rbd_control vs Pinocchio {pinocchio.__version__}, Python "
          f"{sys.version.split()[0]}, numpy {np.__version__}; {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}")
    single = ("function", "ours µs", "pin µs", "ratio")
    single_formats = [(46, ""), (8, ".3f"), (8, ".3f"), (6, ".2f")]
    for title, xml in (("Panda (9 DoF), one state per call", panda_urdf()),
                       ("30-DoF tree (trunk + 4 branches, depth 12), one state per call",
                        tree_urdf(tree30(), name="tree30"))):
        pair = Pair(xml)
        table(title, single, compare(pair, repeats, number), single_formats)
        if pair.model.name == "panda":
            table("Panda task space (panda_hand), one state per call", single,
                  task_space_rows(pair, repeats, number), single_formats)
        table(f"  {pair.model.nq} DoF, 1000 states in one call vs a Python loop of Pinocchio",
              ("function", "ours ms", "pin ms", "ratio"), batch_rows(pair, repeats),
              [(24, ""), (8, ".3f"), (8, ".3f"), (6, ".2f")])

    sizes = (10, 25, 50, 100, 200)
    table("Chains: cost per DoF (rnea O(n)) and per DoF² (crba O(n·depth), depth = n)",
          ("DoF", "rnea µs", "ns/DoF", "batch ns/DoF", "crba µs", "ns/DoF²", "rnea/pin"),
          scaling_rows(sizes, 3 if args.quick else 5),
          [(5, ""), (8, ".2f"), (7, ".1f"), (12, ".1f"), (8, ".2f"), (8, ".2f"), (8, ".2f")])

    cold, warm = startup_times()
    print(f"\nFresh process to first rnea (import + load Panda + call): "
          f"cold compile {cold:.2f} s, warm cache {warm:.2f} s")


if __name__ == "__main__":
    main()
