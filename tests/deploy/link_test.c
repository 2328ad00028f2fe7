/* link_test.c - a program built against an installed ikd (make install + pkg-config), using the library alone. */
#include <ikd/ikd.h>
#include <stdio.h>

int main(void)
{
    ikd_joint j[3] = {{.position = {0, 0, 0}}, {.position = {0, 1, 0}}, {.position = {0, 2, 0}}};
    for (int i = 0; i < 3; i++) j[i].rotation = ikd_quat_identity();
    ikd_problem p;
    ikd_problem_init(&p);
    p.joints = j;
    p.joint_count = 3;
    p.target = ikd_vec3_make(1, 1, 0);
    ikd_error err;
    ikd_result res;
    ikd_pose_joint pose[3];
    if (ikd_validate(&p, &err) != IKD_E_OK || ikd_solve(&p, NULL, 0, pose, &res, &err) != IKD_E_OK) return 1;
    printf("linked against the installed libikd: %s, %s\n", ikd_solver_name(res.solver), ikd_status_name(res.status));
    return res.reached ? 0 : 1;
}
