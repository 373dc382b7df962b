import type { Corpus } from "./corpus.js";
import type { FuzzTarget } from "./target.js";
import { requestTarget, responseTarget } from "./targets/envelopes.js";
import { framesTarget } from "./targets/frames.js";
import { codecs, messageTarget } from "./targets/messages.js";
import { muxTarget } from "./targets/mux.js";
import { translateTarget } from "./targets/translate.js";

export { codecs } from "./targets/messages.js";
export { Finding, type FuzzTarget } from "./target.js";

/** Every fuzz target over `corpus`, in the order they are run and reported. */
export function fuzzTargets(corpus: Corpus): FuzzTarget[] {
  return [framesTarget(corpus), requestTarget(corpus), responseTarget(corpus), muxTarget(corpus), translateTarget(corpus), ...codecs.map((c) => messageTarget(corpus, c))];
}
