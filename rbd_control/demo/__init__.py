"""The rbd_control demo: the default arm in MuJoCo under the real ROS 2 nodes.

    python -m rbd_control.demo [--output demo_output] [--real-time] [--skip-identification]

Modules: data (home pose, trajectory), record (Recorder, Series), run (the phases),
report (statistics, table, verdict, recording), plots (PNG figures), cartesian (the push
phase), contact (the obstacle phase), plant (a robot that is not its URDF), identify and
identify_report (the identification phase and its before / after block), cli (main).

What it shows, with rbd_mujoco_sim and rbd_controller in their own processes (the
rbd_bringup layout) and this process recording the controller's tuning topics:

  1. gravity_compensation: the arm is released at a pose and must stay there;
  2. the same ~8 s trajectory through the workspace, in computed_torque,
  3. and again in feedforward_pd (switched at runtime through the `mode` parameter);
  4. cartesian_impedance holding tool0 while MuJoCo pushes it with a known force: it yields
     by F/K and springs back (cartesian.py, cartesian_impedance_push.png);
  5. contact (contact.py, MuJoCo only): computed_torque drives tool0 into a box in the
     simulator (obstacle.box); the controller's momentum observer detects the collision and
     contact.reaction hold stops the arm: detection delay, stop time, peak force
     (contact_detection.png: ~/external_torque against MuJoCo's constraint torque);
  6. identification (identify.py): the simulator plays a perturbed arm with friction and a
     payload, the controller starts from the nominal URDF; an excitation run through the
     nodes, the fit, then gravity compensation and feedforward_pd with the nominal, the
     identified and the exact model: before / after (identification_before_after.png).

It prints a summary table (RMS and max tracking error per joint, drift, peak effort,
state→command latency) and writes PNG plots to the output directory.

By default the simulator runs in lockstep: one 1 ms physics step per effort command,
so the result does not depend on how busy the machine is, and the state→command
latency it measures is the true round trip (simulator → controller → simulator).
"""
