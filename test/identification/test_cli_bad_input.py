"""rbd_identify given bad input: one line on stderr naming what is wrong and exit status 2,
never a traceback, never a silent truncation; without the optional plotting extra it still
gives a clean result."""
from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf, rnea_batch
from rbd_control.identification.cli import main

MODEL = load_urdf(default_arm_urdf())
JOINTS = np.array(MODEL.joint_names)
N = 2000      # 10 s at 200 Hz


def synthetic():
    """(t, q, tau): each joint on its own sum of sines; tau = the model's inverse dynamics."""
    t = np.arange(N) / 200.0
    w = 0.6 + 0.37 * np.arange(len(JOINTS))
    q = 0.5 * np.sin(np.outer(t, w)) + 0.2 * np.sin(np.outer(t, 2.3 * w) + 1.0)
    qd = 0.5 * w * np.cos(np.outer(t, w)) + 0.46 * w * np.cos(np.outer(t, 2.3 * w) + 1.0)
    qdd = -0.5 * w**2 * np.sin(np.outer(t, w)) - 1.058 * w**2 * np.sin(np.outer(t, 2.3 * w) + 1.0)
    return t, q, rnea_batch(MODEL, q, qd, qdd)


def npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def bad_recordings(tmp):
    t, q, tau = synthetic()
    still = q.copy()
    still[:, 2] = 0.3
    for name, megabytes in (('200MB.npz', 200), ('300MB.npz', 300)):
        with open(tmp / name, 'wb') as f:
            f.truncate(megabytes * 2**20)       # zeros (sparse: instant)
    (tmp / 'empty.npz').write_bytes(b'')
    (tmp / 'random.npz').write_bytes(np.random.default_rng(0).bytes(4096))
    (tmp / 'rec.csv').write_text('t,q\n0,0\n')
    pickled = tmp / 'pickled.npz'
    np.savez(pickled, joints=np.array([list(JOINTS)], dtype=object), t=t, q=q, tau=tau)
    (tmp / 'pickle.npz').write_bytes(pickle.dumps({'t': t}))
    return {
        'empty file': (tmp / 'empty.npz', 'unreadable'),
        'random bytes': (tmp / 'random.npz', 'unreadable'),
        '200 MB of zeros': (tmp / '200MB.npz', 'unreadable'),
        '300 MB': (tmp / '300MB.npz', 'exceed the bound'),
        'pickled arrays': (pickled, 'unreadable'),
        'a pickle': (tmp / 'pickle.npz', 'unreadable'),
        'a csv': (tmp / 'rec.csv', 'not a .csv'),
        'unexcited q': (npz(tmp / 'still.npz', joints=JOINTS, t=t, q=still, tau=tau),
                        "['elbow'] do not move"),
        'q shorter than t': (npz(tmp / 'short.npz', joints=JOINTS, t=t, q=q[:-10], tau=tau),
                             'q has shape (1990, 6)'),
        'tau shorter than t': (npz(tmp / 'tau.npz', joints=JOINTS, t=t, q=q, tau=tau[:-1]),
                               'tau has shape (1999, 6)'),
        '5 columns for 6 joints': (npz(tmp / 'cols.npz', joints=JOINTS, t=t, q=q[:, :5],
                                       tau=tau), 'q has shape (2000, 5)'),
        '0-d joints': (npz(tmp / 'zero_d.npz', joints=np.array('elbow'), t=t, q=q, tau=tau),
                       "'joints' must be a list of names"),
    }


@pytest.fixture(scope='module')
def bad(tmp_path_factory):
    return bad_recordings(tmp_path_factory.mktemp('bad'))


def one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith('rbd_identify: '), err
    return lines[0]


@pytest.mark.parametrize('case', ['empty file', 'random bytes', '200 MB of zeros', '300 MB',
                                  'pickled arrays',
                                  'a pickle', 'a csv', 'unexcited q', 'q shorter than t',
                                  'tau shorter than t', '5 columns for 6 joints', '0-d joints'])
def test_a_bad_recording_is_one_line_and_exit_2(bad, case, capsys, tmp_path):
    path, named = bad[case]
    line = one_line_error(capsys, ['--recording', str(path), '--output', str(tmp_path)])
    assert named in line, line


@pytest.mark.parametrize('option, value', [('--cutoff', '0'), ('--epsilon', '-1'),
                                           ('--epsilon', 'nan'), ('--holdout', '0.95')])
def test_bad_options_are_refused_before_any_work(option, value, capsys, tmp_path):
    # the recording does not even exist: the option is checked first
    line = one_line_error(capsys, ['--recording', str(tmp_path / 'none.npz'), option, value])
    assert option in line, line


def test_an_unknown_payload_link_is_refused_before_the_fit(tmp_path, capsys):
    t, q, tau = synthetic()
    path = npz(tmp_path / 'rec.npz', joints=JOINTS, t=t, q=q, tau=tau)
    line = one_line_error(capsys, ['--recording', str(path), '--payload-link', 'nope',
                                   '--output', str(tmp_path / 'out')])
    assert "'nope'" in line


def test_without_the_plotting_extra_the_result_is_still_clean(tmp_path, capsys, monkeypatch):
    t, q, tau = synthetic()
    path = npz(tmp_path / 'rec.npz', joints=JOINTS, t=t, q=q, tau=tau)
    monkeypatch.setitem(sys.modules, 'matplotlib', None)     # import matplotlib -> ImportError
    out = tmp_path / 'out'
    assert main(['--recording', str(path), '--output', str(out), '--no-friction']) == 0
    printed = capsys.readouterr().out
    assert 'no plot: matplotlib' in printed
    assert (out / 'identified.urdf').exists() and (out / 'report.txt').exists()
    assert not (out / 'held_back_torques.png').exists()
    # each joint's confidence figure: the worst held-back block (a model exact up to the
    # filtering of the derivatives here)
    rows = {line.split()[0]: line.split() for line in (out / 'report.txt').read_text()
            .splitlines() if line.split() and line.split()[0] in JOINTS}
    assert set(rows) == set(JOINTS)
    header = [line for line in (out / 'report.txt').read_text().splitlines()
              if line.startswith('joint')][0]
    assert 'confidence' in header
    for joint, row in rows.items():
        every, worst = (float(x.rstrip('%')) for x in row[2:4])
        assert every <= worst < 5.0, (joint, row)
