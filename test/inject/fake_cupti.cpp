// A stand-in libcupti.so.13 for libciq-inject's tests (no GPU here): the
// functions cupti_loader.h resolves, answering as a CUPTI that records
// nothing, and one of its own, fake_cupti_call(), with which a stand-in
// program (capture_driver.cpp) plays the driver: it hands a callback to the
// subscriber, as CUPTI would, when that callback's domain and id were
// enabled. Subscribing twice fails, as CUPTI's one-subscriber rule does.
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>

#include <set>
#include <utility>

namespace {

CUpti_CallbackFunc subscriber = nullptr;
void* subscriber_data = nullptr;
std::set<std::pair<int, unsigned>> enabled;  // (domain, id)

} // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_FAKE";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback, void* data) {
  if (subscriber) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscriber = callback;
  subscriber_data = data;
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId id) {
  if (handle != reinterpret_cast<CUpti_SubscriberHandle>(&subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) enabled.insert({int(domain), unsigned(id)});
  else enabled.erase({int(domain), unsigned(id)});
  return CUPTI_SUCCESS;
}

/// The test's hook: delivers one callback as CUPTI would. 1 when a
/// subscriber took it, 0 when none is subscribed or the id is not enabled.
__attribute__((visibility("default"))) int fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                                          const void* data) {
  if (!subscriber || !enabled.count({int(domain), unsigned(id)})) return 0;
  subscriber(subscriber_data, domain, id, data);
  return 1;
}

} // extern "C"
