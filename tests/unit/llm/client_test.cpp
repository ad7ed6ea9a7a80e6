// The LLM client against the replay server: success with accounting,
// retries (429 with Retry-After, 5xx, timeouts, dropped connections,
// malformed JSON), bad credentials and unknown models (endpoint dropped, said
// once), budgets, weights and the concurrency limit.
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "llm/client.h"
#include "llm/http.h"
#include "support/replay_server.h"

namespace kevolve::llm {
namespace {

using testing::replay_server;

llm_config one_endpoint(const replay_server& s, const std::string& model = "m1") {
  llm_config c;
  endpoint_config e;
  e.base_url = s.base_url();
  e.model = model;
  e.input_cost_per_mtok = 2.0;
  e.output_cost_per_mtok = 10.0;
  e.read_timeout_s = 5;
  c.endpoints.push_back(e);
  c.backoff_s = 0.01;
  c.max_backoff_s = 5;
  c.retries = 3;
  return c;
}

const std::vector<chat_message> kHello = {{"system", "you write kernels"}, {"user", "write one"}};

struct notices {
  std::vector<std::string> lines;
  std::mutex mu;
  notice_sink sink() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lk(mu);
      lines.push_back(m);
    };
  }
};

TEST(LlmClient, AReplyIsReturnedAndItsTokensAndCostAreCounted) {
  replay_server s(R"({"replies": [{"content": "hello kernel"}]})");
  http_llm_client c(one_endpoint(s));
  const chat_outcome o = c.chat("t/a", kHello);
  ASSERT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_EQ(o.reply.content, "hello kernel");
  EXPECT_EQ(o.model, "m1");
  EXPECT_EQ(o.attempts, 1);
  EXPECT_GT(o.reply.usage.prompt_tokens, 0);
  EXPECT_FALSE(o.reply.usage.estimated);
  const double cost = o.reply.usage.prompt_tokens * 2.0 / 1e6 + o.reply.usage.completion_tokens * 10.0 / 1e6;
  EXPECT_DOUBLE_EQ(o.cost, cost);
  EXPECT_EQ(c.spent().tokens(), o.reply.usage.total());
  EXPECT_EQ(c.spent("t/a").requests, 1);
  EXPECT_EQ(c.spent("t/b").requests, 0);
  const auto log = s.requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find(R"(\"model\":\"m1\")"), std::string::npos) << log[0];
}

TEST(LlmClient, A429WithRetryAfterIsRetriedAfterTheServersDelay) {
  replay_server s(R"({"replies": [{"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": {"message": "slow down"}}},
                                  {"content": "ok now"}]})");
  http_llm_client c(one_endpoint(s));
  const chat_outcome o = c.chat("t", kHello);
  ASSERT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_EQ(o.attempts, 2);
  EXPECT_GE(o.total_s, 0.95);  // backoff_s is 0.01: only Retry-After explains the wait
  ASSERT_EQ(o.attempt_log.size(), 1u);
  EXPECT_NE(o.attempt_log[0].find("HTTP 429 (retry after 1.0 s): slow down"), std::string::npos) << o.attempt_log[0];
}

TEST(LlmClient, ServerErrorsAreRetriedWithBackoff) {
  replay_server s(R"({"replies": [{"status": 500}, {"status": 502}, {"content": "third time"}]})");
  http_llm_client c(one_endpoint(s));
  const chat_outcome o = c.chat("t", kHello);
  ASSERT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_EQ(o.attempts, 3);
  EXPECT_EQ(o.reply.content, "third time");
}

TEST(LlmClient, RetriesEndAndTheLastErrorIsReported) {
  replay_server s(R"({"replies": [{"status": 503, "body": {"error": {"message": "overloaded"}}}]})");
  auto cfg = one_endpoint(s);
  cfg.retries = 2;
  cfg.failures_to_suspend = 100;
  http_llm_client c(cfg);
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_EQ(o.status, chat_status::failed);
  EXPECT_EQ(o.attempts, 3);
  EXPECT_NE(o.error.find("HTTP 503: overloaded"), std::string::npos) << o.error;
  EXPECT_EQ(s.requests().size(), 3u);
}

TEST(LlmClient, ATimeoutIsRetried) {
  replay_server s(R"({"replies": [{"delay_s": 3, "content": "late"}, {"content": "on time"}]})");
  auto cfg = one_endpoint(s);
  cfg.endpoints[0].read_timeout_s = 0.5;
  http_llm_client c(cfg);
  const chat_outcome o = c.chat("t", kHello);
  ASSERT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_EQ(o.reply.content, "on time");
  ASSERT_EQ(o.attempt_log.size(), 1u);
  EXPECT_NE(o.attempt_log[0].find("timed out"), std::string::npos) << o.attempt_log[0];
}

TEST(LlmClient, ADroppedConnectionIsRetried) {
  replay_server s(R"({"replies": [{"drop": true}, {"content": "reconnected"}]})");
  http_llm_client c(one_endpoint(s));
  const chat_outcome o = c.chat("t", kHello);
  ASSERT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_EQ(o.reply.content, "reconnected");
  ASSERT_EQ(o.attempt_log.size(), 1u);
  EXPECT_NE(o.attempt_log[0].find("network error"), std::string::npos) << o.attempt_log[0];
}

TEST(LlmClient, MalformedJsonIsNamedAndRetried) {
  replay_server s(R"({"replies": [{"raw": "{not json"}, {"raw": "{\"choices\": []}"}]})");
  auto cfg = one_endpoint(s);
  cfg.retries = 1;
  http_llm_client c(cfg);
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_EQ(o.status, chat_status::failed);
  ASSERT_EQ(o.attempt_log.size(), 2u);
  EXPECT_NE(o.attempt_log[0].find("malformed reply: not JSON"), std::string::npos) << o.attempt_log[0];
  EXPECT_NE(o.attempt_log[1].find("malformed reply: no 'choices'"), std::string::npos) << o.attempt_log[1];
}

TEST(LlmClient, BadCredentialsDropTheEndpointTellTheUserOnceAndNeverLeakTheKey) {
  replay_server s(R"({"require_key": "right-key", "replies": [{"content": "never"}]})");
  ::setenv("KEVOLVE_TEST_LLM_KEY", "sk-wrong-key-0123456789", 1);
  auto cfg = one_endpoint(s);
  cfg.endpoints[0].api_key_env = "KEVOLVE_TEST_LLM_KEY";
  notices n;
  http_llm_client c(cfg, n.sink());
  const chat_outcome a = c.chat("t", kHello);
  const chat_outcome b = c.chat("t", kHello);
  EXPECT_NE(a.status, chat_status::ok);
  EXPECT_EQ(b.status, chat_status::unavailable);
  EXPECT_FALSE(c.usable("t"));
  EXPECT_EQ(s.requests().size(), 1u);  // the dropped endpoint got nothing more
  ASSERT_EQ(n.lines.size(), 1u);
  EXPECT_NE(n.lines[0].find("HTTP 401: the server refused the credentials in $KEVOLVE_TEST_LLM_KEY"), std::string::npos)
      << n.lines[0];
  EXPECT_NE(n.lines[0].find("not used again"), std::string::npos);
  for (const std::string& text : {n.lines[0], a.error, b.error})
    EXPECT_EQ(text.find("sk-wrong-key"), std::string::npos) << text;
  EXPECT_NE(s.requests()[0].find("\"authorization\": \"present\""), std::string::npos) << s.requests()[0];
  ::unsetenv("KEVOLVE_TEST_LLM_KEY");
}

TEST(LlmClient, TheKeyIsSentFromTheEnvironmentAtRequestTime) {
  replay_server s(R"({"require_key": "right-key", "replies": [{"content": "welcome"}]})");
  auto cfg = one_endpoint(s);
  cfg.endpoints[0].api_key_env = "KEVOLVE_TEST_LLM_KEY2";
  http_llm_client c(cfg);
  ::setenv("KEVOLVE_TEST_LLM_KEY2", "right-key", 1);  // after the client was made
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_EQ(o.status, chat_status::ok) << o.error;
  EXPECT_NE(s.requests()[0].find("\"authorization\": \"matched\""), std::string::npos);
  ::unsetenv("KEVOLVE_TEST_LLM_KEY2");
}

TEST(LlmClient, AMissingKeyVariableIsNamed) {
  replay_server s(R"({"replies": [{"content": "x"}]})");
  auto cfg = one_endpoint(s);
  cfg.endpoints[0].api_key_env = "KEVOLVE_TEST_UNSET_KEY";
  notices n;
  http_llm_client c(cfg, n.sink());
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_NE(o.status, chat_status::ok);
  ASSERT_EQ(n.lines.size(), 1u);
  EXPECT_NE(n.lines[0].find("the environment variable KEVOLVE_TEST_UNSET_KEY (llm.endpoints[].api_key_env) is not set"),
            std::string::npos) << n.lines[0];
  EXPECT_TRUE(s.requests().empty());
}

TEST(LlmClient, AnUnknownModelIsSaidClearlyAndTheEndpointDropped) {
  replay_server s(R"({"replies": [{"status": 404, "body": {"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}}]})");
  notices n;
  http_llm_client c(one_endpoint(s, "nope"), n.sink());
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_NE(o.status, chat_status::ok);
  ASSERT_EQ(n.lines.size(), 1u);
  EXPECT_NE(n.lines[0].find("the server does not know model 'nope'"), std::string::npos) << n.lines[0];
  EXPECT_FALSE(c.usable("t"));
}

TEST(LlmClient, TheSweepBudgetStopsSpendingCleanly) {
  replay_server s(R"({"replies": [{"content": "a reply of some length to count"}]})");
  auto cfg = one_endpoint(s);
  cfg.budget.tokens = 10;  // one request spends more
  notices n;
  http_llm_client c(cfg, n.sink());
  EXPECT_EQ(c.chat("t/a", kHello).status, chat_status::ok);
  const chat_outcome o = c.chat("t/b", kHello);
  EXPECT_EQ(o.status, chat_status::over_budget);
  EXPECT_NE(o.error.find("the sweep's token budget is spent"), std::string::npos) << o.error;
  EXPECT_EQ(s.requests().size(), 1u);
  EXPECT_EQ(c.blocked("t/c").rfind("the sweep's token budget is spent", 0), 0u) << c.blocked("t/c");
  EXPECT_TRUE(n.lines.empty());  // the caller (the llm synthesizer) says what it does instead
}

TEST(LlmClient, ATaskBudgetStopsOnlyThatTask) {
  replay_server s(R"({"replies": [{"content": "reply"}]})");
  auto cfg = one_endpoint(s);
  cfg.budget.task_cost = 1e-9;
  http_llm_client c(cfg);
  EXPECT_EQ(c.chat("t/a", kHello).status, chat_status::ok);
  EXPECT_EQ(c.chat("t/a", kHello).status, chat_status::over_budget);
  EXPECT_EQ(c.chat("t/b", kHello).status, chat_status::ok);
  EXPECT_EQ(s.requests().size(), 2u);
}

TEST(LlmClient, SpendingOfEarlierSessionsCountsAgainstTheBudget) {
  replay_server s(R"({"replies": [{"content": "reply"}]})");
  auto cfg = one_endpoint(s);
  cfg.budget.cost = 1.0;
  http_llm_client c(cfg);
  c.add_spent("t/a", {1000, 500, 1.0, 3});  // a resumed sweep already spent it all
  const chat_outcome o = c.chat("t/b", kHello);
  EXPECT_EQ(o.status, chat_status::over_budget);
  EXPECT_NE(o.error.find("the sweep's cost budget is spent (1.0000 of 1.0000)"), std::string::npos) << o.error;
  EXPECT_TRUE(s.requests().empty());
  EXPECT_EQ(c.spent().requests, 3);
}

TEST(LlmClient, EndpointsAreChosenByWeight) {
  replay_server s(R"({"replies": [{"content": "x"}]})");
  auto cfg = one_endpoint(s, "cheap");
  auto strong = cfg.endpoints[0];
  strong.model = "strong";
  strong.weight = 1;
  cfg.endpoints[0].weight = 3;
  cfg.endpoints.push_back(strong);
  http_llm_client c(cfg);
  int cheap = 0;
  for (int i = 0; i < 80; ++i) cheap += c.chat("t", kHello).model == "cheap";
  EXPECT_GT(cheap, 45);  // expected 60 of 80
  EXPECT_LT(cheap, 75);
}

TEST(LlmClient, TheConcurrencyLimitHoldsRequestsBack) {
  replay_server s(R"({"replies": [{"delay_s": 0.3, "content": "x"}]})");
  auto cfg = one_endpoint(s);
  cfg.endpoints[0].max_concurrency = 1;
  http_llm_client c(cfg);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&] { EXPECT_EQ(c.chat("t", kHello).status, chat_status::ok); });
  for (auto& t : threads) t.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.85);  // one at a time: 3 x 0.3 s
}

TEST(LlmClient, AFailingEndpointIsSuspended) {
  replay_server s(R"({"replies": [{"status": 500}]})");
  auto cfg = one_endpoint(s);
  cfg.retries = 1;
  cfg.failures_to_suspend = 2;
  cfg.suspend_s = 60;
  notices n;
  http_llm_client c(cfg, n.sink());
  EXPECT_EQ(c.chat("t", kHello).status, chat_status::failed);
  EXPECT_FALSE(c.usable("t"));
  EXPECT_EQ(c.chat("t", kHello).status, chat_status::unavailable);
  ASSERT_EQ(n.lines.size(), 1u);
  EXPECT_NE(n.lines[0].find("suspended for 60 s after 2 failed requests in a row"), std::string::npos) << n.lines[0];
}

TEST(LlmClient, NoEndpointIsUnavailable) {
  http_llm_client c(llm_config{});
  const chat_outcome o = c.chat("t", kHello);
  EXPECT_EQ(o.status, chat_status::unavailable);
  EXPECT_NE(o.error.find("no llm endpoint is configured"), std::string::npos);
}

TEST(LlmProtocol, RetryAfterReadsSecondsAndDates) {
  EXPECT_DOUBLE_EQ(parse_retry_after("3"), 3.0);
  EXPECT_LT(parse_retry_after(""), 0);
  EXPECT_LT(parse_retry_after("soon"), 0);
  EXPECT_GE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past: now
}

}  // namespace
}  // namespace kevolve::llm
