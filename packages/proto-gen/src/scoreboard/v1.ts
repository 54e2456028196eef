/** scoreboard.v1: messages, the ScoreboardService descriptor and its file descriptor. */
export * from "../gen/scoreboard/v1/scoreboard_pb";
