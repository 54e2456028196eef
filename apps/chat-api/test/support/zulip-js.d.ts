/**
 * zulip-js 2.1.0 (npm, no types of its own), every method the tests call: each
 * method sends one request and resolves to Zulip's JSON answer.
 */
declare module "zulip-js" {
  type Reply = Record<string, unknown> & { result: string; msg: string };
  type Call = (params?: Record<string, unknown>) => Promise<Reply>;

  interface ZulipClient {
    config: { apiKey: string; username: string; realm: string; apiURL: string };
    callEndpoint(
      endpoint: string,
      method?: string,
      params?: Record<string, unknown>,
    ): Promise<Reply>;
    accounts: { retrieve: Call };
    emojis: { retrieve: Call };
    events: { retrieve: Call };
    filters: { retrieve: Call };
    messages: {
      retrieve: Call;
      send: Call;
      getById: Call;
      update: Call;
      render: (content: string | Record<string, unknown>) => Promise<Reply>;
      getHistoryById: Call;
      deleteById: Call;
      deleteReactionById: Call;
      flags: { add: Call; remove: Call };
    };
    typing: { send: Call };
    reactions: { add: Call; remove: Call };
    queues: { register: Call; deregister: Call };
    server: { settings: Call };
    streams: {
      retrieve: Call;
      getStreamId: (name: string | Record<string, unknown>) => Promise<Reply>;
      deleteById: Call;
      deleteReactionById: Call;
      subscriptions: { retrieve: Call };
      topics: { retrieve: Call };
    };
    users: {
      retrieve: Call;
      create: Call;
      me: {
        pointer: { retrieve: Call; update: (id: number) => Promise<Reply> };
        getProfile: Call;
        subscriptions: { add: Call; remove: Call };
        alertWords: { retrieve: Call };
      };
    };
  }

  function zulipInit(config: {
    realm: string;
    username: string;
    apiKey?: string;
    password?: string;
  }): Promise<ZulipClient>;

  export = zulipInit;
}
