/**
 * nri-wire/mux: NRI's trunk multiplexer. One socket carries logical connections by conn id
 * (conn 1: the plugin's ttrpc server; conn 2: the runtime's), each a Node Duplex.
 */
export { MuxError } from "./errors.js";
export {
  MAX_READ_PAYLOAD,
  MAX_WRITE_PAYLOAD,
  MUX_HEADER_LENGTH,
  MuxDecoder,
  type MuxSegment,
  encodeMuxFrames,
} from "./trunk-frame.js";
export { Mux, MuxConnection, type MuxOptions, PLUGIN_SERVICE_CONN, RESERVED_CONN_ID, RUNTIME_SERVICE_CONN } from "./mux.js";
