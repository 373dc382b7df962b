import { create } from "../api/messages.js";
import { Field, type FieldOwners, type OwningPlugins } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { AdaptationError } from "./errors.js";
import { goQuote } from "../internal/go-quote.js";
import { markForRemoval, markedForRemoval } from "../api/removal.js";
import { setOwn } from "../wire/reader.js";

/**
 * Which plugin set which field of which container during one event, kept directly in the
 * `OwningPlugins` message a validator receives (container id → field → owner, keyed fields by
 * their key). A record `-P` means plugin P removed the field: P may set it again, anyone else
 * conflicts with P. Hooks never conflict; their owner is the comma-joined list of contributors.
 */
export class OwnershipClaims {
  /** The records, in the shape sent to validators. */
  readonly message: OwningPlugins = create(v1beta1.OwningPlugins);

  /** Records `plugin` as the owner of a single-valued field; throws if another plugin owns it. */
  claim(id: string, field: Field, plugin: string): void {
    const owners = this.ownersFor(id);
    const other = owners.simple[field];
    if (other !== undefined) checkConflict(field, plugin, other, "");
    owners.simple[field] = plugin;
  }

  /** Records `plugin` as the owner of `key` of a keyed field; throws if another plugin owns it. */
  claimKey(id: string, field: Field, key: string, plugin: string): void {
    const owners = this.ownersFor(id);
    const compound = owners.compound[field];
    if (compound === undefined) {
      const compound = create(v1beta1.CompoundFieldOwners);
      setOwn(compound.owners, key, plugin);
      owners.compound[field] = compound;
      return;
    }
    if (Object.hasOwn(compound.owners, key)) checkConflict(field, plugin, compound.owners[key]!, key);
    setOwn(compound.owners, key, plugin);
  }

  /** Marks a single-valued field as removed by `plugin` (`-plugin`). */
  clear(id: string, field: Field, plugin: string): void {
    this.ownersFor(id).simple[field] = markForRemoval(plugin);
  }

  /** Marks `key` of a keyed field as removed by `plugin` (`-plugin`). */
  clearKey(id: string, field: Field, key: string, plugin: string): void {
    const owners = this.ownersFor(id);
    const compound = (owners.compound[field] ??= create(v1beta1.CompoundFieldOwners));
    setOwn(compound.owners, key, markForRemoval(plugin));
  }

  /** Adds `plugin` to the hooks' contributors (`a,b`); hooks accumulate and never conflict. */
  accumulateHooks(id: string, plugin: string): void {
    const owners = this.ownersFor(id);
    const old = owners.simple[Field.OciHooks];
    owners.simple[Field.OciHooks] = old === undefined ? plugin : `${old},${plugin}`;
  }

  /** Marks the three RDT fields as removed by `plugin`. */
  clearRdt(id: string, plugin: string): void {
    for (const f of [Field.RdtClosID, Field.RdtSchemata, Field.RdtEnableMonitoring]) this.clear(id, f, plugin);
  }

  private ownersFor(id: string): FieldOwners {
    const all = this.message.owners;
    if (Object.hasOwn(all, id)) return all[id]!;
    const f = create(v1beta1.FieldOwners);
    setOwn(all, id, f);
    return f;
  }
}

/** Go's conflict text; single-valued fields keep the trailing space of an empty qualifier. */
function checkConflict(field: Field, plugin: string, other: string, key: string): void {
  const removedBy = markedForRemoval(other);
  if (removedBy === plugin) return;
  const clearer = removedBy ?? other;
  const name = Field[field] ?? String(field);
  throw new AdaptationError(`plugins ${goQuote(plugin)} and ${goQuote(clearer)} both tried to set ${name} ${key}`);
}

