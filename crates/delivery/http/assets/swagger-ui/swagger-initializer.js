// Ours (not part of swagger-ui-dist): starts Swagger UI on the served OpenAPI document.
//
// Every /api operation declares both the `ApiKey` security scheme (header `Api-Key`, what the
// Authorize button fills) and the required `Api-Key` header parameter the spec demands. Swagger
// UI treats them separately: Authorize adds the header to requests, but the required parameter
// field stays empty and "Execute" refuses to run ("Required field is not provided"). So the
// plugin below copies the authorized key into every operation's `Api-Key` field (and clears it
// on logout): Authorize once, then "Try it out" / "Execute" anywhere.
(function () {
  "use strict";
  var SCHEME = "ApiKey";
  var HEADER = "Api-Key";

  function fillApiKeyFields(system, value) {
    var spec = system.specSelectors.specJson();
    var paths = spec && spec.get("paths");
    if (!paths) return;
    paths.forEach(function (item, path) {
      if (path.indexOf("/api/") !== 0 || !item || !item.forEach) return;
      item.forEach(function (_operation, method) {
        if (["get", "post", "put", "patch", "delete"].indexOf(method) < 0) return;
        system.specActions.changeParam([path, method], HEADER, "header", value);
      });
    });
  }

  function ApiKeyFillsHeaderParameter() {
    return {
      statePlugins: {
        auth: {
          wrapActions: {
            authorize: function (original, system) {
              return function (payload) {
                var result = original(payload);
                var entry = payload && payload[SCHEME];
                if (entry && entry.value) fillApiKeyFields(system, entry.value);
                return result;
              };
            },
            logout: function (original, system) {
              return function (payload) {
                var result = original(payload);
                if (!payload || payload.indexOf(SCHEME) >= 0) fillApiKeyFields(system, "");
                return result;
              };
            },
          },
        },
      },
    };
  }

  window.onload = function () {
    window.ui = SwaggerUIBundle({
      url: "/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis],
      plugins: [ApiKeyFillsHeaderParameter],
      layout: "BaseLayout",
      // Nothing leaves this server: no validator badge calling validator.swagger.io.
      validatorUrl: null,
      displayRequestDuration: true,
      tryItOutEnabled: false,
      persistAuthorization: false,
    });
  };
})();
