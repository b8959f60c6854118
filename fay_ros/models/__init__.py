"""Models a user can pull, use and remove (`fay-ros models`): the catalogue
(config/models.yaml), where pulled models live and which ones the user chose (`store`), and
the one place anything is downloaded (`fetch`, run only by the command, never by a node).
Pure Python, no ROS."""
