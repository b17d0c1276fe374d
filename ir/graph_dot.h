// kiln/ir/graph_dot.h — a Graph as Graphviz text (printing only).
//
// Inputs are ellipses, nodes boxes labelled with their op, attributes and output types,
// outputs double octagons; edges follow the values, named as the text format names them.
// `kiln dot FILE.kir` prints it; KILN_DEBUG_DIR writes one beside every .kir stage.
#pragma once

#include "ir/graph.h"

#include <string>

namespace kiln::ir {

std::string graph_dot(const Graph& g, const std::string& title = "graph");

}  // namespace kiln::ir
