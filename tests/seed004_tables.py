"""The missile seeker's tables of seed 004 (the reference for the YAML and the CAD sample).

TABLE_1 : Table 1, in order: (joint name, type, reference body, secondary body, actuated).
TABLE_2 : Table 2, the composite bodies (sets of part names).
"""

TABLE_1 = [
    ("fix_pitch_a", "fixed", "housing", "pitch_connector_a", False),
    ("fix_pitch_b", "fixed", "housing", "pitch_connector_b", False),
    ("pitch_a", "revolute", "pitch_connector_a", "gimbal_ring", True),
    ("pitch_b", "revolute", "pitch_connector_b", "gimbal_ring", False),
    ("fix_yaw_a", "fixed", "gimbal_ring", "yaw_connector_a", False),
    ("yaw_a", "revolute", "yaw_connector_a", "shaft_a", True),
    ("fix_yaw_b", "fixed", "gimbal_ring", "yaw_connector_b", False),
    ("yaw_b", "revolute", "yaw_connector_b", "shaft_b", False),
    ("fix_cam_a", "fixed", "shaft_a", "camera", False),
    ("fix_cam_b", "fixed", "shaft_b", "camera", False),
]
TABLE_2 = [{"housing", "pitch_connector_a", "pitch_connector_b"},
           {"gimbal_ring", "yaw_connector_a", "yaw_connector_b"}, {"camera", "shaft_a", "shaft_b"}]
