/**
 * What stamps every event (src/trials/events.ts): the schema version and the time. Kept apart from
 * the event schemas so that a writer of events (`berth eval`) does not load zod at start-up.
 */

/**
 * Version of the event schema. Adding an event type or an optional field keeps it; renaming or
 * removing one, or changing a meaning, bumps it.
 */
export const EVENTS_SCHEMA_VERSION = 1;

/** The time field of an event: ISO 8601 UTC. */
export const eventTime = (): string => new Date().toISOString();
