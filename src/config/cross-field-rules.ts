// Rules that span keys, as zod refinements: each rule names the key its line is about, when it
// holds, its rule text, and the value its line shows (a derived default shows how it was
// derived: `10s (leaseDuration × 0.25)`). The agent's config and the fleet and controller flags
// keep their rules as a list of these, so a new rule is one more entry.
//
// Failure modes: a broken rule is a zod custom issue at [key] whose params carry `shown`
// (config-error.ts renders it as `key: shown must be rule`). Every broken rule is reported, in
// the list's order.
import { z } from 'zod/v3';
import type { ShownParams } from './config-error.ts';
import type { Timed } from './value-schemas.ts';

export interface CrossFieldRule<C> {
  readonly key: keyof C & string;
  readonly holds: (c: C) => boolean;
  /** The tail of `key: value must be rule`. */
  readonly rule: (c: C) => string;
  /** The value as the line shows it. */
  readonly shown: (c: C) => string;
}

/** The refinement that checks `rules` in order. */
export function checkCrossFieldRules<C>(rules: readonly CrossFieldRule<C>[]): (c: C, ctx: z.RefinementCtx) => void {
  return (c, ctx) => {
    for (const rule of rules) {
      if (rule.holds(c)) continue;
      const params: ShownParams = { shown: rule.shown(c) };
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [rule.key], message: rule.rule(c), params });
    }
  };
}

type TimedKey<C> = { [K in keyof C]-?: C[K] extends Timed ? K : never }[keyof C] & string;

/** `a` must be shorter than `b`: `relistDeadline: 5m must be shorter than relistThreshold (1m0s)`. */
export function shorter<C>(a: TimedKey<C>, b: TimedKey<C>): CrossFieldRule<C> {
  const ms = (c: C, k: TimedKey<C>): Timed => c[k] as Timed;
  return { key: a, holds: (c) => ms(c, a).ms < ms(c, b).ms, rule: (c) => `shorter than ${b} (${ms(c, b).text})`, shown: (c) => ms(c, a).text };
}

/** `a` must be longer than `b`. */
export function longer<C>(a: TimedKey<C>, b: TimedKey<C>): CrossFieldRule<C> {
  const ms = (c: C, k: TimedKey<C>): Timed => c[k] as Timed;
  return { key: a, holds: (c) => ms(c, a).ms > ms(c, b).ms, rule: (c) => `longer than ${b} (${ms(c, b).text})`, shown: (c) => ms(c, a).text };
}
