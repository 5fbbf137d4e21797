/**
 * Topological ordering of a dependency graph.
 *
 * A graph is a plain object mapping a node name to the array of names it
 * depends on. Nodes that only appear as dependencies are nodes too. Ties are
 * broken by first appearance: the order of the object's keys, then of each
 * dependency array.
 */

/** Thrown when the graph has a cycle; `cycle` lists the nodes on it. */
export class CycleError extends Error {
  constructor(cycle) {
    super(`cycle: ${cycle.join(' -> ')}`);
    this.name = 'CycleError';
    this.cycle = cycle;
  }
}

/** Every node after all of its dependencies, ties in order of first appearance. */
export function toposort(graph) {
  const order = [];
  const visited = new Set();
  const visit = (node) => {
    if (visited.has(node)) return;
    visited.add(node);
    for (const dep of graph[node] ?? []) visit(dep);
    order.push(node);
  };
  for (const node of Object.keys(graph)) visit(node);
  return order;
}

/**
 * Groups nodes into levels: level 0 has no dependencies, and every node sits
 * one level above its deepest dependency. Within a level, nodes keep the order
 * of `toposort`.
 */
export function levels(graph) {
  const result = [];
  for (const node of toposort(graph)) {
    const level = (graph[node] ?? []).length;
    while (result.length <= level) result.push([]);
    result[level].push(node);
  }
  return result;
}
