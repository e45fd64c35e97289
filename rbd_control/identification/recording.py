"""Recordings to identify from: time, joint positions and measured efforts (velocities when
there are any), by joint name.

    read_recording(path) -> Recording
        *.npz with t, q, tau, joints (and qd): what rbd_bringup --excite writes;
        *.npz of the demo (joints, <run>_t, <run>_actual, <run>_effort): every run, in time order;
        a rosbag2 directory (or its .db3/.mcap) of sensor_msgs/JointState, read with `rosbags`.
        A bag whose topic carries two sources (an arm's and a gripper's states, each naming
        its own joints) gives the source with the most samples carrying positions and
        efforts; the other sources' joints come as `other_positions`, their median recorded
        positions, at which rbd_identify holds them (held_joints.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from rbd_control.dynamics.errors import InputError

JOINT_STATES_TOPIC = "/joint_states"
# an hour at 1 kHz of 7 joints (t, q, qd, tau) compresses to ~100 MB; anything larger is
# refused before it is read into memory
MAX_RECORDING_BYTES = 256 * 2**20
BAG_SUFFIXES = (".db3", ".mcap")


@dataclass(frozen=True)
class Recording:
    joints: tuple
    t: np.ndarray                  # (N,) s, strictly increasing
    q: np.ndarray                  # (N, len(joints))
    tau: np.ndarray
    qd: Optional[np.ndarray] = None
    # joints another source of the bag recorded (a gripper's): median position, not fitted
    other_positions: dict = field(default_factory=dict)

    def in_order(self, joint_names) -> "Recording":
        """The columns of joint_names, in that order (the model's)."""
        missing = [j for j in joint_names if j not in self.joints]
        if missing:
            raise InputError(f"the recording has no samples of joints {missing} (it has "
                             f"{list(self.joints)})")
        index = [self.joints.index(j) for j in joint_names]
        pick = lambda x: None if x is None else x[:, index]  # noqa: E731
        # a joint at rest excites none of its parameters (others, e.g. a gripper's, may rest)
        still = [j for j, span in zip(joint_names, np.ptp(self.q[:, index], axis=0))
                 if not span > 1e-6]
        if still:
            raise InputError(f"joints {still} do not move in the recording (q constant): "
                             "nothing of theirs can be identified")
        return Recording(tuple(joint_names), self.t, pick(self.q), pick(self.tau), pick(self.qd))

    def split(self, holdout: float):
        """(fit part, held-back part): the last `holdout` fraction of the samples held back."""
        cut = int(round(len(self.t) * (1.0 - holdout)))
        part = lambda s: Recording(self.joints, self.t[s], self.q[s], self.tau[s],  # noqa: E731
                                   None if self.qd is None else self.qd[s])
        return part(slice(0, cut)), part(slice(cut, None))

    def save(self, path) -> Path:
        arrays = dict(joints=np.array(self.joints), t=self.t, q=self.q, tau=self.tau)
        if self.qd is not None:
            arrays["qd"] = self.qd
        np.savez_compressed(path, **arrays)
        return Path(path)


def read_recording(path, topic=JOINT_STATES_TOPIC) -> Recording:
    path = Path(path)
    if not path.exists():
        raise InputError(f"recording {path} does not exist")
    if not (path.suffix == ".npz" or path.is_dir() or path.suffix in BAG_SUFFIXES):
        raise InputError(f"recording {path}: give an .npz or a rosbag2 (its directory, .db3 or "
                         f".mcap), not a {path.suffix or 'file without suffix'}")
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() \
        else path.stat().st_size
    if size > MAX_RECORDING_BYTES:
        raise InputError(f"recording {path}: {size} bytes exceed the bound of "
                         f"{MAX_RECORDING_BYTES} bytes")
    try:
        recording = _read_npz(path) if path.suffix == ".npz" else _read_bag(path, topic)
        return _sorted(_checked(recording))
    except InputError:
        raise
    except Exception as error:   # numpy's, zipfile's, pickle's, rosbags' errors for a broken file
        raise InputError(f"recording {path} is unreadable: {type(error).__name__}: {error}") \
            from None


def _read_npz(path):
    with np.load(path, allow_pickle=False) as data:   # pickled arrays: ValueError, refused
        keys = set(data.files)
        if "joints" not in keys:
            raise InputError(f"{path}: no 'joints' array: not a recording of ours")
        if data["joints"].ndim != 1:
            raise InputError(f"{path}: 'joints' must be a list of names, got an array of shape "
                             f"{data['joints'].shape}")
        joints = tuple(str(j) for j in data["joints"])
        if {"t", "q", "tau"} <= keys:
            return Recording(joints, data["t"], data["q"], data["tau"],
                             data["qd"] if "qd" in keys else None)
        runs = sorted(k[:-2] for k in keys if k.endswith("_t")
                      and {k[:-2] + "_actual", k[:-2] + "_effort"} <= keys)
        if not runs:
            raise InputError(f"{path}: neither t/q/tau nor the demo's <run>_t/_actual/_effort")
        t, q, tau = (np.concatenate([data[f"{r}{suffix}"] for r in runs])
                     for suffix in ("_t", "_actual", "_effort"))
        return Recording(joints, t, q, tau)


def _read_bag(path, topic):
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    bag = path if path.is_dir() else path.parent
    rows = []
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            raise InputError(f"{bag}: no topic {topic} (topics: "
                             f"{sorted({c.topic for c in reader.connections})})")
        for connection, _, raw in reader.messages(connections=connections):
            msg = reader.deserialize(raw, connection.msgtype)
            rows.append(msg)
    if not rows:
        raise InputError(f"{bag}: {topic} has no messages")
    sources = {}                        # one per name list: an arm's, a gripper's ...
    for m in rows:
        sources.setdefault(tuple(m.name), []).append(m)
    complete = {joints: [m for m in msgs if len(m.effort) == len(joints)
                         and len(m.position) == len(joints)]
                for joints, msgs in sources.items()}
    joints, keep = max(complete.items(), key=lambda item: len(item[1]))
    if not keep:
        raise InputError(f"{bag}: no JointState on {topic} carries positions and efforts")
    t = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in keep])
    q = np.array([m.position for m in keep], dtype=float)
    tau = np.array([m.effort for m in keep], dtype=float)
    with_velocity = all(len(m.velocity) == len(joints) for m in keep)
    qd = np.array([m.velocity for m in keep], dtype=float) if with_velocity else None
    return Recording(joints, t, q, tau, qd, _other_positions(sources, joints))


def _other_positions(sources, main):
    """{joint: median recorded position} of the joints only the other sources name."""
    out = {}
    for joints, msgs in sources.items():
        for i, joint in enumerate(joints):
            values = [m.position[i] for m in msgs if len(m.position) == len(joints)]
            if joint not in main and joint not in out and values:
                out[joint] = float(np.median(values))
    return out


def _checked(recording):
    """The arrays' shapes agree: t (N,), q and tau (N, joints), qd too if present. Nothing is
    truncated."""
    n, joints = len(np.ravel(recording.t)), len(recording.joints)
    if np.ndim(recording.t) != 1:
        raise InputError(f"t must be one time per sample, got shape {np.shape(recording.t)}")
    for name in ("q", "tau", "qd"):
        x = getattr(recording, name)
        if x is not None and np.shape(x) != (n, joints):
            raise InputError(f"{name} has shape {np.shape(x)}; {n} samples of {joints} joints "
                             f"({len(recording.t)} times, joints {list(recording.joints)}) "
                             f"need ({n}, {joints})")
    return recording


def _sorted(recording):
    """Samples in time order, one per time stamp, all finite."""
    t = np.asarray(recording.t, dtype=float)
    order = np.argsort(t, kind="stable")
    t = t[order]
    unique = np.concatenate(([True], np.diff(t) > 0))
    pick = lambda x: None if x is None else np.asarray(x, float)[order][unique]  # noqa: E731
    out = Recording(recording.joints, t[unique], pick(recording.q), pick(recording.tau),
                    pick(recording.qd), recording.other_positions)
    arrays = [out.t, out.q, out.tau] + ([] if out.qd is None else [out.qd])
    if not all(np.all(np.isfinite(x)) for x in arrays):
        raise InputError("the recording contains NaN or inf samples")
    if len(out.t) < 100:
        raise InputError(f"the recording has only {len(out.t)} samples")
    return out
