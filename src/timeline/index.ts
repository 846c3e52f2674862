/** Each payment's and invoice's timeline, kept in the store for the operator console. */
export { createTimelineRecorder } from './recorder.js';
export type { TimelineRecorder } from './recorder.js';
export { readTimeline } from './read-timeline.js';
export type { Timeline, TimelineEntry } from './read-timeline.js';
export { HandlerDataSchema, NewsDataSchema, resourceSubject, HANDLER_KIND, NEWS_KIND } from './activity-data.js';
export type { HandlerData, NewsData } from './activity-data.js';
