export { CycleError, levels, toposort } from './toposort.js';
