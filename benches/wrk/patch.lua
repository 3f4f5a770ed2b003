-- merge-PATCH over w0..w31; every request sets a replicas value no other request sets, so each is a real write.
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end
local n = 0
request = function()
  n = n + 1
  local body = '{"spec":{"replicas":' .. (n * 16 + tid) .. '}}'
  local path = "/apis/example.com/v1/namespaces/default/widgets/w" .. (n % 32)
  return wrk.format("PATCH", path, {["Content-Type"] = "application/merge-patch+json", ["Authorization"] = "Bearer " .. os.getenv("TOKEN"), ["Accept"] = "application/json"}, body)
end
