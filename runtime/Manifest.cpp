//===- Manifest.cpp - What a compiled graph needs to run
//-------------------===//
#include "runtime/Manifest.h"

#include "llvm/ADT/StringSet.h"

using namespace llvm;

namespace mtc {

int64_t BufferInfo::bytes() const {
  return tensorBytes(dtype, numElements(shape).value_or(0));
}

const BufferInfo *Manifest::findBuffer(StringRef name) const {
  for (const BufferInfo &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<const BufferInfo *> Manifest::inputs() const {
  std::vector<const BufferInfo *> out;
  for (const BufferInfo &b : buffers)
    if (b.role == BufferInfo::Role::Input)
      out.push_back(&b);
  return out;
}

static StringRef roleName(BufferInfo::Role r) {
  switch (r) {
  case BufferInfo::Role::Input:
    return "input";
  case BufferInfo::Role::Output:
    return "output";
  case BufferInfo::Role::Intermediate:
    return "intermediate";
  case BufferInfo::Role::Workspace:
    return "workspace";
  }
  return "?";
}

/// How a buffer must be initialised before the first launch.
static StringRef initName(BufferInfo::Role r) {
  switch (r) {
  case BufferInfo::Role::Input:
  case BufferInfo::Role::Output:
    return "caller";
  case BufferInfo::Role::Intermediate:
    return "none";
  case BufferInfo::Role::Workspace:
    return "zero_once";
  }
  return "?";
}

static json::Array toArray(ArrayRef<int64_t> v) {
  json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

json::Value Manifest::toJSON() const {
  json::Array bufs;
  for (const BufferInfo &b : buffers)
    bufs.push_back(json::Object{{"name", b.name},
                                {"role", roleName(b.role)},
                                {"dtype", dtypeName(b.dtype)},
                                {"shape", toArray(b.shape)},
                                {"bytes", b.bytes()},
                                {"init", initName(b.role)}});
  json::Array ks;
  for (const KernelInfo &k : kernels) {
    json::Object o{{"name", k.name},
                   {"kind", k.kind},
                   {"nodes", json::Array(k.nodes)},
                   {"params", json::Array(k.params)},
                   {"grid", toArray(k.grid)},
                   {"block", toArray(k.block)},
                   {"shared_bytes", k.sharedBytes},
                   {"dynamic_shared_bytes", k.dynamicSharedBytes},
                   {"schedule", k.schedule},
                   {"schedule_fields", json::Object(k.scheduleFields)},
                   {"flops", k.flops},
                   {"min_bytes", k.minBytes}};
    if (k.tunedMicros)
      o["tuned_us"] = *k.tunedMicros;
    if (!k.tensorMaps.empty()) {
      json::Array maps;
      for (const TensorMapInfo &t : k.tensorMaps)
        maps.push_back(t.toJSON());
      o["tensor_maps"] = std::move(maps);
    }
    ks.push_back(std::move(o));
  }
  json::Object binds;
  for (auto &[name, v] : bindings)
    binds[name] = v;
  return json::Object{{"mtc_version", mtcVersion},
                      {"graph", graph},
                      {"source", source},
                      {"arch", arch},
                      {"grid_dependency", gridDependency},
                      {"ptx", ptxFile},
                      {"bindings", std::move(binds)},
                      {"buffers", std::move(bufs)},
                      {"outputs", json::Array(outputs)},
                      {"kernels", std::move(ks)}};
}

static Error malformed(const Twine &what) {
  return createStringError(inconvertibleErrorCode(),
                           "malformed manifest: " + what);
}

static bool readShape(const json::Array *a, Shape &out) {
  if (!a)
    return false;
  for (const json::Value &v : *a) {
    std::optional<int64_t> d = v.getAsInteger();
    if (!d)
      return false;
    out.push_back(*d);
  }
  return true;
}

/// Reads kernel `k`'s "tensor_maps" and checks each against its buffer and
/// CUDA's rules.
static Error readTensorMaps(const json::Object *ko, const Manifest &m,
                            KernelInfo &k) {
  const json::Array *maps = ko->getArray("tensor_maps");
  if (!maps)
    return Error::success();
  std::vector<bool> seen(k.params.size());
  for (const json::Value &tv : *maps) {
    Expected<TensorMapInfo> t = TensorMapInfo::fromJSON(tv);
    if (!t)
      return malformed("kernel '" + k.name + "': " + toString(t.takeError()));
    std::string where = "kernel '" + k.name +
                        "': the tensor map of parameter " +
                        std::to_string(t->param);
    if (t->param >= k.params.size())
      return malformed(where + ", which does not exist (the kernel takes " +
                       Twine(k.params.size()) + ")");
    if (seen[t->param])
      return malformed(where + " appears twice");
    seen[t->param] = true;
    const BufferInfo *b = m.findBuffer(k.params[t->param]);
    // An i4 buffer's map moves bytes (two elements each).
    unsigned eb = b->dtype == DType::I4 ? 1 : dtypeBytes(b->dtype);
    where += " ('" + b->name + "', " + dtypeName(b->dtype).str() + ")";
    if (std::string why = t->invalidReason(eb); !why.empty())
      return malformed(where + " is invalid: " + why);
    if (t->extentBytes(eb) > b->bytes())
      return malformed(where + " spans " + Twine(t->extentBytes(eb)) +
                       " bytes but the buffer has " + Twine(b->bytes()));
    k.tensorMaps.push_back(std::move(*t));
  }
  return Error::success();
}

Expected<Manifest> Manifest::fromJSON(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return malformed("not an object");
  Manifest m;
  auto str = [&](const json::Object *obj, StringRef key,
                 std::string &out) -> bool {
    std::optional<StringRef> s = obj->getString(key);
    if (!s)
      return false;
    out = s->str();
    return true;
  };
  if (!str(o, "mtc_version", m.mtcVersion) || !str(o, "graph", m.graph) ||
      !str(o, "arch", m.arch) || !str(o, "ptx", m.ptxFile))
    return malformed("missing mtc_version, graph, arch or ptx");
  str(o, "source", m.source);
  // Absent in manifests of mtc before programmatic dependent launch.
  m.gridDependency = o->getBoolean("grid_dependency").value_or(false);
  if (const json::Object *b = o->getObject("bindings"))
    for (auto &[key, val] : *b)
      if (std::optional<int64_t> i = val.getAsInteger())
        m.bindings.push_back({key.str(), *i});
  const json::Array *bufs = o->getArray("buffers");
  if (!bufs)
    return malformed("missing buffers");
  for (const json::Value &bv : *bufs) {
    const json::Object *bo = bv.getAsObject();
    BufferInfo b;
    std::string role, dtype;
    if (!bo || !str(bo, "name", b.name) || !str(bo, "role", role) ||
        !str(bo, "dtype", dtype) || !readShape(bo->getArray("shape"), b.shape))
      return malformed("bad buffer entry");
    std::optional<DType> dt = parseDType(dtype);
    if (!dt)
      return malformed("unknown dtype '" + dtype + "'");
    b.dtype = *dt;
    if (role == "input")
      b.role = BufferInfo::Role::Input;
    else if (role == "output")
      b.role = BufferInfo::Role::Output;
    else if (role == "intermediate")
      b.role = BufferInfo::Role::Intermediate;
    else if (role == "workspace")
      b.role = BufferInfo::Role::Workspace;
    else
      return malformed("unknown buffer role '" + role + "'");
    if (std::optional<StringRef> init = bo->getString("init");
        init && *init != initName(b.role))
      return malformed("buffer '" + b.name + "' (" + role + ") has init '" +
                       *init + "', expected '" + initName(b.role) + "'");
    std::string err;
    if (!checkShape(b.shape, err))
      return malformed("buffer '" + b.name + "': " + err);
    m.buffers.push_back(std::move(b));
  }
  // Names are checked against a set: manifests of large graphs have
  // thousands of buffers and parameters.
  StringSet<> names;
  for (const BufferInfo &b : m.buffers)
    names.insert(b.name);
  const json::Array *outs = o->getArray("outputs");
  if (!outs)
    return malformed("missing outputs");
  for (const json::Value &ov : *outs) {
    std::optional<StringRef> s = ov.getAsString();
    if (!s || !names.contains(*s))
      return malformed("output is not a buffer");
    m.outputs.push_back(s->str());
  }
  const json::Array *ks = o->getArray("kernels");
  if (!ks)
    return malformed("missing kernels");
  for (const json::Value &kv : *ks) {
    const json::Object *ko = kv.getAsObject();
    KernelInfo k;
    if (!ko || !str(ko, "name", k.name) || !str(ko, "kind", k.kind))
      return malformed("bad kernel entry");
    str(ko, "schedule", k.schedule);
    auto strings = [&](StringRef key, std::vector<std::string> &out) {
      if (const json::Array *a = ko->getArray(key))
        for (const json::Value &s : *a)
          if (std::optional<StringRef> sv = s.getAsString())
            out.push_back(sv->str());
    };
    strings("nodes", k.nodes);
    strings("params", k.params);
    for (const std::string &p : k.params)
      if (!names.contains(p))
        return malformed("kernel '" + k.name + "' uses unknown buffer '" + p +
                         "'");
    Shape grid, block;
    if (!readShape(ko->getArray("grid"), grid) || grid.size() != 3 ||
        !readShape(ko->getArray("block"), block) || block.size() != 3)
      return malformed("kernel '" + k.name + "' needs 3-D grid and block");
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = grid[i];
      k.block[i] = block[i];
    }
    k.sharedBytes = ko->getInteger("shared_bytes").value_or(0);
    std::optional<int64_t> dynamicShared =
        ko->getInteger("dynamic_shared_bytes");
    if (!dynamicShared)
      return malformed("kernel '" + k.name +
                       "' has no dynamic_shared_bytes (written by an older "
                       "mtc: compile the graph again)");
    k.dynamicSharedBytes = *dynamicShared;
    if (k.dynamicSharedBytes < 0 || k.sharedBytes < k.dynamicSharedBytes)
      return malformed("kernel '" + k.name + "' has dynamic_shared_bytes " +
                       Twine(k.dynamicSharedBytes) + " and shared_bytes " +
                       Twine(k.sharedBytes));
    if (const json::Object *sf = ko->getObject("schedule_fields"))
      k.scheduleFields = *sf;
    k.flops = ko->getNumber("flops").value_or(0);
    k.minBytes = ko->getNumber("min_bytes").value_or(0);
    if (std::optional<double> t = ko->getNumber("tuned_us"))
      k.tunedMicros = *t;
    if (Error e = readTensorMaps(ko, m, k))
      return std::move(e);
    m.kernels.push_back(std::move(k));
  }
  return m;
}

std::optional<size_t> DispatchManifest::select(int64_t v) const {
  for (size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i].value >= v)
      return i;
  return std::nullopt;
}

json::Value DispatchManifest::toJSON() const {
  json::Array bs;
  for (const Bucket &b : buckets)
    bs.push_back(json::Object{{"value", b.value}, {"manifest", b.manifest}});
  return json::Object{
      {"mtc_version", mtcVersion},
      {"graph", graph},
      {"source", source},
      {"symbol", symbol},
      {"buckets", std::move(bs)},
      {"dispatch", "smallest bucket >= the runtime value; inputs are "
                   "zero-padded along the symbolic dimension to the bucket, "
                   "outputs cut back to the runtime value"}};
}

Expected<DispatchManifest> DispatchManifest::fromJSON(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return malformed("dispatch manifest is not an object");
  DispatchManifest d;
  auto str = [&](StringRef key, std::string &out) {
    if (std::optional<StringRef> s = o->getString(key))
      out = s->str();
  };
  str("mtc_version", d.mtcVersion);
  str("graph", d.graph);
  str("source", d.source);
  str("symbol", d.symbol);
  const json::Array *bs = o->getArray("buckets");
  if (!bs || d.symbol.empty())
    return malformed("dispatch manifest needs a symbol and buckets");
  for (const json::Value &bv : *bs) {
    const json::Object *bo = bv.getAsObject();
    std::optional<int64_t> value = bo ? bo->getInteger("value") : std::nullopt;
    std::optional<StringRef> file =
        bo ? bo->getString("manifest") : std::nullopt;
    if (!value || !file || *value <= 0 ||
        (!d.buckets.empty() && *value <= d.buckets.back().value))
      return malformed("dispatch buckets must have ascending positive values "
                       "and a manifest");
    d.buckets.push_back({*value, file->str()});
  }
  return d;
}

} // namespace mtc
