/**
 * nri-wire: the containerd NRI wire protocol. This entry holds the version-independent helpers;
 * the protocol revisions are `nri-wire/v1alpha1` and `nri-wire/v1beta1`.
 */
export {
  ALL_EVENTS,
  FIRST_EVENT,
  LAST_VALID_EVENT,
  VALID_EVENTS_MASK,
  checkMask,
  eventBit,
  eventsToMask,
  formatEvent,
  formatEventMask,
  isValidEvent,
  maskToEvents,
  parseEvent,
  parseEventMask,
  type EventNameStyle,
} from "./api/events.js";
export { Event } from "../gen/v1beta1/api_lite.js";
