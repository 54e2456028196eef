/**
 * zxcvbn on a worker thread ({@link isStrongPassword}): its dictionaries load
 * here, on the thread's first check, and its time, which grows with what the
 * password looks like, is never the server's own thread's.
 */
import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import * as common from "@zxcvbn-ts/language-common";
import * as english from "@zxcvbn-ts/language-en";

/** What a check asks: the password, and words an attacker would try first. */
export interface StrengthTask {
  password: string;
  userInputs: string[];
  maxLength: number;
}

let estimator: ZxcvbnFactory | undefined;

/** zxcvbn's estimate of the guesses `task.password` needs (piscina calls the default export). */
export default function estimateGuesses(task: StrengthTask): number {
  estimator ??= new ZxcvbnFactory({
    graphs: common.adjacencyGraphs,
    dictionary: { ...common.dictionary, ...english.dictionary },
    translations: english.translations,
    maxLength: task.maxLength,
    // Fewer l33t variants than zxcvbn's 100: the worst password seen took 75 ms, not 780 ms.
    l33tMaxSubstitutions: 8,
  });
  return estimator.check(task.password, task.userInputs).guesses;
}
