"""crba_diagonal_batch equals the diagonal of the full CRBA on random trees and on a long chain."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rbd_control.dynamics import crba, crba_diagonal_batch, load_urdf

from random_urdf_trees import PROPERTY_SETTINGS, to_urdf, trees


@PROPERTY_SETTINGS
@given(tree=trees(), seed=st.integers(0, 2**31 - 1))
def test_diagonal_equals_full_crba_diagonal(tree, seed):
    model = load_urdf(to_urdf(tree))
    Q = np.random.default_rng(seed).uniform(-np.pi, np.pi, size=(4, model.nq))
    D = crba_diagonal_batch(model, Q)
    for q, d in zip(Q, D):
        np.testing.assert_allclose(d, np.diag(crba(model, q)), rtol=1e-12, atol=1e-12)


def chain_urdf(n):
    links = ['<link name="base"/>']
    joints = []
    for i in range(n):
        links.append(f'<link name="l{i}"><inertial><mass value="1"/><origin xyz="0 0 0.05"/>'
                     '<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/>'
                     '</inertial></link>')
        parent = "base" if i == 0 else f"l{i - 1}"
        axis = ("0 0 1", "0 1 0", "1 0 0")[i % 3]
        joints.append(f'<joint name="j{i}" type="revolute"><parent link="{parent}"/>'
                      f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="{axis}"/>'
                      '<limit lower="-3" upper="3" effort="100" velocity="1"/></joint>')
    return f'<robot name="chain">{"".join(links)}{"".join(joints)}</robot>'


def test_long_chain_diagonal_matches_full_crba():
    model = load_urdf(chain_urdf(300))
    d = crba_diagonal_batch(model, np.zeros((1, model.nq)))[0]
    assert np.all(d > 0)
    np.testing.assert_allclose(d, np.diag(crba(model, np.zeros(model.nq))), rtol=1e-12)
