/** The ids of events (`evt_…`, the feed's) and of messages (`msg_…`, the `webhook-id` of a delivery). */
import { randomUUID } from 'node:crypto';

export const newEventId = () => `evt_${randomUUID().replaceAll('-', '')}`;
export const newMessageId = () => `msg_${randomUUID().replaceAll('-', '')}`;
