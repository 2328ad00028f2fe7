/* ikd/ikd.h - the whole public solver library API in one include. */
#ifndef IKD_IKD_H
#define IKD_IKD_H

#include "ikd/chain.h"
#include "ikd/constraint.h"
#include "ikd/error.h"
#include "ikd/math.h"
#include "ikd/motion.h"
#include "ikd/skeleton.h"
#include "ikd/solve.h"

#endif
