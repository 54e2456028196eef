/** An event as clients receive it (`id` is added per queue when it is read). */
export interface ChatEvent {
  type: string;
  [field: string]: unknown;
}
