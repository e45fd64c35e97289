"""rbd_controller's feature adapters: each one turns a ROS-free feature of rbd_control.control
into topics, services and parameters, and is registered from the node in a few lines."""
