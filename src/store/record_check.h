// Consistency of a sweep_record, independent of the file format: what
// write_store refuses to write and read_store refuses to return, so that a
// record that can be written can always be read back.
#pragma once

#include <string>
#include <vector>

#include "search/tree.h"
#include "store/sweep_record.h"

namespace kevolve::store {

// "" when the task is consistent, else what is wrong, naming the node:
// node k has id k, the root has no parent and every other node a parent
// before it, modes/states/statuses are known values, context entries and
// measurement nodes are nodes of the task, children are exactly the nodes
// whose parent is k in increasing id order, names have no NUL byte.
std::string check_task(const task_record& t);

// check_task for every task, prefixed with "task <i> (<id>): ", and the
// record's own strings.
std::string check_record(const sweep_record& r);

// Sets every node's children from the parents, in increasing id order (the
// order tree::add_child appends them). Nodes with a bad parent are left out.
void link_children(std::vector<search::node>& nodes);

}  // namespace kevolve::store
