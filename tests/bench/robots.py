"""robots.py - URDFs of the other arms issue 42 names (UR10, iiwa 14, xArm 6, Kinova JACO2, Unitree Z1, Baxter), from their published kinematics.

    python3 tests/bench/robots.py DIR   (make bench writes them to build/robots and runs tests/bench/arms.py on them)

The shared samples hold two real URDFs (UR5, Panda); the issue's measure also names six other
arms. Their vendors' description packages are not reachable here, so this writes each arm's
kinematic chain as those packages give it (joint origins, axes and limits, as we read them from
the vendors' URDFs and datasheets: link lengths in metres, limits in radians), in the layout a
vendor's file has: a fixed base link, fixed joints between, a tool flange, continuous joints
(JACO2's, with a <limit> carrying no range), ranges past +-180 degrees (JACO2's joints 2 and 3),
ranges that exclude zero (xArm 6's joint 3, Z1's joints 2 and 3), two arms and a head on one
torso (Baxter). No meshes and no inertia: the importer reads neither. These are approximations
of the real files, for measuring on arms of other shapes than the family's and the samples';
they are no substitute for the vendors' own.
"""
import math
import os
import sys

PI = math.pi

# (name, parent link, child link, type, xyz, rpy, axis, (lower, upper) or None)
UR10 = [
    ("base_link-base_fixed_joint", "world", "base_link", "fixed", (0, 0, 0), (0, 0, 0), None, None),
    ("shoulder_pan_joint", "base_link", "shoulder_link", "revolute", (0, 0, 0.1273), (0, 0, 0), (0, 0, 1), (-2 * PI, 2 * PI)),
    ("shoulder_lift_joint", "shoulder_link", "upper_arm_link", "revolute", (0, 0.220941, 0), (0, PI / 2, 0), (0, 1, 0), (-2 * PI, 2 * PI)),
    ("elbow_joint", "upper_arm_link", "forearm_link", "revolute", (0, -0.1719, 0.612), (0, 0, 0), (0, 1, 0), (-PI, PI)),
    ("wrist_1_joint", "forearm_link", "wrist_1_link", "revolute", (0, 0, 0.5723), (0, PI / 2, 0), (0, 1, 0), (-2 * PI, 2 * PI)),
    ("wrist_2_joint", "wrist_1_link", "wrist_2_link", "revolute", (0, 0.1149, 0), (0, 0, 0), (0, 0, 1), (-2 * PI, 2 * PI)),
    ("wrist_3_joint", "wrist_2_link", "wrist_3_link", "revolute", (0, 0, 0.1157), (0, 0, 0), (0, 1, 0), (-2 * PI, 2 * PI)),
    ("ee_fixed_joint", "wrist_3_link", "ee_link", "fixed", (0, 0.0922, 0), (0, 0, PI / 2), None, None),
]

D = math.radians
IIWA14 = [
    ("iiwa_joint_1", "iiwa_link_0", "iiwa_link_1", "revolute", (0, 0, 0.1575), (0, 0, 0), (0, 0, 1), (-D(170), D(170))),
    ("iiwa_joint_2", "iiwa_link_1", "iiwa_link_2", "revolute", (0, 0, 0.2025), (PI / 2, 0, PI), (0, 0, 1), (-D(120), D(120))),
    ("iiwa_joint_3", "iiwa_link_2", "iiwa_link_3", "revolute", (0, 0.2045, 0), (PI / 2, 0, PI), (0, 0, 1), (-D(170), D(170))),
    ("iiwa_joint_4", "iiwa_link_3", "iiwa_link_4", "revolute", (0, 0, 0.2155), (PI / 2, 0, 0), (0, 0, 1), (-D(120), D(120))),
    ("iiwa_joint_5", "iiwa_link_4", "iiwa_link_5", "revolute", (0, 0.1845, 0), (-PI / 2, PI, 0), (0, 0, 1), (-D(170), D(170))),
    ("iiwa_joint_6", "iiwa_link_5", "iiwa_link_6", "revolute", (0, 0, 0.2155), (PI / 2, 0, 0), (0, 0, 1), (-D(120), D(120))),
    ("iiwa_joint_7", "iiwa_link_6", "iiwa_link_7", "revolute", (0, 0.081, 0), (-PI / 2, PI, 0), (0, 0, 1), (-D(175), D(175))),
    ("iiwa_joint_ee", "iiwa_link_7", "iiwa_link_ee", "fixed", (0, 0, 0.045), (0, 0, 0), None, None),
]

XARM6 = [
    ("joint1", "link_base", "link1", "revolute", (0, 0, 0.267), (0, 0, 0), (0, 0, 1), (-2 * PI, 2 * PI)),
    ("joint2", "link1", "link2", "revolute", (0, 0, 0), (-PI / 2, 0, 0), (0, 0, 1), (-2.059, 2.0944)),
    ("joint3", "link2", "link3", "revolute", (0.0535, -0.2845, 0), (0, 0, 0), (0, 0, 1), (-3.927, -0.19198)),
    ("joint4", "link3", "link4", "revolute", (0.0775, 0.3425, 0), (-PI / 2, 0, 0), (0, 0, 1), (-2 * PI, 2 * PI)),
    ("joint5", "link4", "link5", "revolute", (0, 0, 0), (PI / 2, 0, 0), (0, 0, 1), (-1.69297, PI)),
    ("joint6", "link5", "link6", "revolute", (0.076, 0.097, 0), (-PI / 2, 0, 0), (0, 0, 1), (-2 * PI, 2 * PI)),
    ("joint_eef", "link6", "link_eef", "fixed", (0, 0, 0), (0, 0, 0), None, None),
]

JACO2 = [  # j2n6s300: a non-spherical wrist (60-degree wrist links)
    ("j2n6s300_joint_base", "root", "j2n6s300_link_base", "fixed", (0, 0, 0), (0, 0, 0), None, None),
    ("j2n6s300_joint_1", "j2n6s300_link_base", "j2n6s300_link_1", "continuous", (0, 0, 0.15675), (0, PI, 0), (0, 0, 1), None),
    ("j2n6s300_joint_2", "j2n6s300_link_1", "j2n6s300_link_2", "revolute", (0, 0.0016, -0.11875), (-PI / 2, 0, PI), (0, 0, 1),
     (D(50), D(310))),
    ("j2n6s300_joint_3", "j2n6s300_link_2", "j2n6s300_link_3", "revolute", (0, -0.410, 0), (0, PI, 0), (0, 0, 1), (D(19), D(341))),
    ("j2n6s300_joint_4", "j2n6s300_link_3", "j2n6s300_link_4", "continuous", (0, 0.2073, -0.0114), (-PI / 2, 0, PI), (0, 0, 1), None),
    ("j2n6s300_joint_5", "j2n6s300_link_4", "j2n6s300_link_5", "continuous", (0, -0.03703, -0.06414), (D(60), 0, PI), (0, 0, 1), None),
    ("j2n6s300_joint_6", "j2n6s300_link_5", "j2n6s300_link_6", "continuous", (0, -0.03703, -0.06414), (D(60), 0, PI), (0, 0, 1), None),
    ("j2n6s300_joint_end_effector", "j2n6s300_link_6", "j2n6s300_end_effector", "fixed", (0, 0, -0.16), (PI, 0, 0), None, None),
]

Z1 = [
    ("base_static_joint", "world", "link00", "fixed", (0, 0, 0), (0, 0, 0), None, None),
    ("joint1", "link00", "link01", "revolute", (0, 0, 0.0585), (0, 0, 0), (0, 0, 1), (-2.6179938779914944, 2.6179938779914944)),
    ("joint2", "link01", "link02", "revolute", (0, 0, 0.045), (0, 0, 0), (0, 1, 0), (0, 2.9670597283903604)),
    ("joint3", "link02", "link03", "revolute", (-0.35, 0, 0), (0, 0, 0), (0, 1, 0), (-2.8797932657906435, 0)),
    ("joint4", "link03", "link04", "revolute", (0.218, 0, 0.057), (0, 0, 0), (0, 1, 0), (-1.5184364492350666, 1.5184364492350666)),
    ("joint5", "link04", "link05", "revolute", (0.07, 0, 0), (0, 0, 0), (0, 0, 1), (-1.3439035240356338, 1.3439035240356338)),
    ("joint6", "link05", "link06", "revolute", (0.0492, 0, 0), (0, 0, 0), (1, 0, 0), (-2.792526803190927, 2.792526803190927)),
    ("gripperStator", "link06", "gripper_tcp", "fixed", (0.1, 0, 0), (0, 0, 0), None, None),
]


def baxter_arm(side):
    s = 1 if side == "left" else -1
    lim = {"s0": (-2.461, 0.890) if side == "right" else (-0.890, 2.461)}
    return [
        (side + "_torso_arm_mount", "torso", side + "_arm_mount", "fixed", (0.024645, s * 0.219645, 0.118588), (0, 0, s * PI / 4),
         None, None),
        (side + "_s0", side + "_arm_mount", side + "_upper_shoulder", "revolute", (0.055695, 0, 0.011038), (0, 0, 0), (0, 0, 1),
         lim["s0"]),
        (side + "_s1", side + "_upper_shoulder", side + "_lower_shoulder", "revolute", (0.069, 0, 0.27035), (-PI / 2, 0, 0), (0, 0, 1),
         (-2.147, 1.047)),
        (side + "_e0", side + "_lower_shoulder", side + "_upper_elbow", "revolute", (0.102, 0, 0), (PI / 2, 0, PI / 2), (0, 0, 1),
         (-3.0541, 3.0541)),
        (side + "_e1", side + "_upper_elbow", side + "_lower_elbow", "revolute", (0.069, 0, 0.26242), (-PI / 2, -PI / 2, 0), (0, 0, 1),
         (-0.05, 2.618)),
        (side + "_w0", side + "_lower_elbow", side + "_upper_forearm", "revolute", (0.10359, 0, 0), (PI / 2, 0, PI / 2), (0, 0, 1),
         (-3.059, 3.059)),
        (side + "_w1", side + "_upper_forearm", side + "_lower_forearm", "revolute", (0.01, 0, 0.2707), (-PI / 2, -PI / 2, 0), (0, 0, 1),
         (-1.5707, 2.094)),
        (side + "_w2", side + "_lower_forearm", side + "_wrist", "revolute", (0.115975, 0, 0), (PI / 2, 0, PI / 2), (0, 0, 1),
         (-3.059, 3.059)),
        (side + "_hand", side + "_wrist", side + "_hand", "fixed", (0, 0, 0.11355), (0, 0, 0), None, None),
    ]


BAXTER = ([("torso_t0", "base", "torso", "fixed", (0, 0, 0), (0, 0, 0), None, None),
           ("head_pan", "torso", "head", "revolute", (0.06, 0, 0.686), (0, 0, 0), (0, 0, 1), (-1.3963, 1.3963))] +
          baxter_arm("left") + baxter_arm("right"))

ROBOTS = {"ur10": UR10, "iiwa14": IIWA14, "xarm6": XARM6, "jaco2_j2n6s300": JACO2, "z1": Z1, "baxter": BAXTER}


def urdf(name, joints):
    links = []
    for j in joints:
        for link in (j[1], j[2]):
            if link not in links:
                links.append(link)
    out = ['<?xml version="1.0"?>', '<robot name="%s">' % name]
    out += ['  <link name="%s"/>' % link for link in links]
    for jname, parent, child, kind, xyz, rpy, axis, lim in joints:
        out.append('  <joint name="%s" type="%s">' % (jname, kind))
        out.append('    <parent link="%s"/>' % parent)
        out.append('    <child link="%s"/>' % child)
        out.append('    <origin xyz="%s" rpy="%s"/>' % (" ".join("%.9g" % v for v in xyz), " ".join("%.17g" % v for v in rpy)))
        if axis:
            out.append('    <axis xyz="%s"/>' % " ".join("%g" % v for v in axis))
        if kind == "continuous":
            out.append('    <limit effort="30" velocity="0.6"/>')
        elif lim:
            out.append('    <limit lower="%.17g" upper="%.17g" effort="100" velocity="1"/>' % lim)
        out.append('  </joint>')
    out.append('</robot>')
    return "\n".join(out) + "\n"


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, joints in ROBOTS.items():
        with open(os.path.join(d, name + ".urdf"), "w") as f:
            f.write(urdf(name, joints))
        print(os.path.join(d, name + ".urdf"))


if __name__ == "__main__":
    main()
