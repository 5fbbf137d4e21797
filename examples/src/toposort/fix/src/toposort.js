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

/**
 * Every node after all of its dependencies, ties in order of first appearance.
 * @throws {CycleError} when a node depends on itself, directly or not; `cycle`
 *   starts and ends with the first node found on it, e.g. `['a', 'b', 'a']`.
 */
export function toposort(graph) {
  const order = [];
  const done = new Set();
  const path = [];
  const onPath = new Set();
  const visit = (node) => {
    if (done.has(node)) return;
    if (onPath.has(node)) {
      throw new CycleError([...path.slice(path.indexOf(node)), node]);
    }
    onPath.add(node);
    path.push(node);
    for (const dep of graph[node] ?? []) visit(dep);
    path.pop();
    onPath.delete(node);
    done.add(node);
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
  const depth = new Map();
  for (const node of toposort(graph)) {
    let level = 0;
    for (const dep of graph[node] ?? []) level = Math.max(level, depth.get(dep) + 1);
    depth.set(node, level);
    while (result.length <= level) result.push([]);
    result[level].push(node);
  }
  return result;
}
