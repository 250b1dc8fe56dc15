/* mbcompose 3-D view: a small WebGL 1 viewer written for the report (no library).
 * Reads the scene from <script type="application/json" id="mbc-scene"> (see composer/report/viewer.py):
 * bodies with flat-shaded triangles in their body frame, joint axes, and the body poses of every
 * frame of the simulated motion.  Mouse: drag to rotate, wheel to zoom.  Play/pause, time slider.
 * Licence: the project's own (this file is part of mbcompose). */
(function () {
  "use strict";
  var root = document.getElementById("mbc-view");
  var canvas = document.getElementById("mbc-canvas");
  var scene = JSON.parse(document.getElementById("mbc-scene").textContent);
  var gl = canvas.getContext("webgl", {antialias: true, preserveDrawingBuffer: true});
  if (!gl) { root.setAttribute("data-state", "no-webgl");
    document.getElementById("mbc-note").textContent = "This browser has no WebGL: the 3-D view is not shown."; return; }

  function floats(b64) {
    var s = atob(b64), n = s.length, bytes = new Uint8Array(n);
    for (var i = 0; i < n; i++) bytes[i] = s.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }
  function shader(type, src) {
    var s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  var prog = gl.createProgram();
  gl.attachShader(prog, shader(gl.VERTEX_SHADER,
    "attribute vec3 aPos; attribute vec3 aNrm; uniform mat4 uProj, uView, uModel; varying vec3 vN;" +
    "void main(){ vN = mat3(uModel) * aNrm; gl_Position = uProj * uView * uModel * vec4(aPos, 1.0); }"));
  gl.attachShader(prog, shader(gl.FRAGMENT_SHADER,
    "precision mediump float; varying vec3 vN; uniform vec3 uColor, uLight; uniform float uLit, uAlpha;" +
    "void main(){ float d = abs(dot(normalize(vN), uLight));" +
    " gl_FragColor = vec4(uColor * mix(1.0, 0.35 + 0.65 * d, uLit), uAlpha); }"));
  gl.linkProgram(prog);
  gl.useProgram(prog);
  var loc = {};
  ["aPos", "aNrm"].forEach(function (n) { loc[n] = gl.getAttribLocation(prog, n); });
  ["uProj", "uView", "uModel", "uColor", "uLight", "uLit", "uAlpha"].forEach(function (n) { loc[n] = gl.getUniformLocation(prog, n); });

  function buffer(data) { var b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW); return b; }
  var meshes = scene.bodies.map(function (b) {
    var pos = floats(b.pos), nrm = floats(b.nrm);
    return {body: b.body, color: b.color, grounded: b.grounded, pos: buffer(pos), nrm: buffer(nrm),
            count: pos.length / 3};
  });
  var axes = scene.axes.map(function (a) {
    var seg = new Float32Array(a.a.concat(a.b));
    return {body: a.body, pos: buffer(seg), nrm: buffer(new Float32Array([0, 0, 1, 0, 0, 1]))};
  });
  var poses = floats(scene.poses), nb = scene.nbodies, times = scene.times;

  function model(frame, body) {   // column-major 4x4 from R (row-major 3x3) and p
    if (body < 0) return [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
    var o = (frame * nb + body) * 12, P = poses;
    return [P[o], P[o + 3], P[o + 6], 0, P[o + 1], P[o + 4], P[o + 7], 0,
            P[o + 2], P[o + 5], P[o + 8], 0, P[o + 9], P[o + 10], P[o + 11], 1];
  }
  function perspective(fovy, aspect, near, far) {
    var f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }
  function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function unit(a) { var n = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / n, a[1] / n, a[2] / n]; }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
  function lookAt(eye, target, up) {
    var z = unit(sub(eye, target)), x = unit(cross(up, z)), y = cross(z, x);
    return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  }

  var view = {yaw: -0.9, pitch: 0.45, dist: 2.6 * scene.radius, frame: 0, playing: false};
  var slider = document.getElementById("mbc-time"), label = document.getElementById("mbc-time-label");
  var button = document.getElementById("mbc-play");
  slider.max = String(times.length - 1);

  function draw() {
    var w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.97, 0.97, 0.98, 1); gl.enable(gl.DEPTH_TEST);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    var c = scene.center, cp = Math.cos(view.pitch);
    var eye = [c[0] + view.dist * cp * Math.cos(view.yaw), c[1] + view.dist * cp * Math.sin(view.yaw),
               c[2] + view.dist * Math.sin(view.pitch)];
    gl.uniformMatrix4fv(loc.uProj, false, perspective(0.8, w / h, scene.radius * 0.01, scene.radius * 100));
    gl.uniformMatrix4fv(loc.uView, false, lookAt(eye, c, [0, 0, 1]));
    gl.uniform3fv(loc.uLight, unit(sub(eye, c)));
    function bind(m) {
      gl.bindBuffer(gl.ARRAY_BUFFER, m.pos); gl.enableVertexAttribArray(loc.aPos);
      gl.vertexAttribPointer(loc.aPos, 3, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, m.nrm); gl.enableVertexAttribArray(loc.aNrm);
      gl.vertexAttribPointer(loc.aNrm, 3, gl.FLOAT, false, 0, 0);
      gl.uniformMatrix4fv(loc.uModel, false, model(view.frame, m.body));
    }
    gl.uniform1f(loc.uLit, 1);
    // moving parts opaque first; parts fixed to the ground after them, see-through (a housing must
    // not hide the mechanism inside it), without writing depth
    function draw(m) { bind(m); gl.uniform3fv(loc.uColor, m.color); gl.drawArrays(gl.TRIANGLES, 0, m.count); }
    gl.uniform1f(loc.uAlpha, 1.0);
    meshes.forEach(function (m) { if (!m.grounded) draw(m); });
    gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false);
    gl.uniform1f(loc.uAlpha, 0.2);
    meshes.forEach(function (m) { if (m.grounded) draw(m); });
    gl.depthMask(true); gl.disable(gl.BLEND); gl.uniform1f(loc.uAlpha, 1.0);
    gl.disable(gl.DEPTH_TEST); gl.uniform1f(loc.uLit, 0); gl.uniform3fv(loc.uColor, [0.85, 0.1, 0.1]);
    axes.forEach(function (a) { bind(a); gl.drawArrays(gl.LINES, 0, 2); });
    slider.value = String(view.frame);
    label.textContent = "t = " + times[view.frame].toFixed(3) + " s";
    root.setAttribute("data-state", "drawn");
    root.setAttribute("data-frame", String(view.frame));
  }

  var last = null, elapsed = 0;
  function tick(now) {
    if (!view.playing) return;
    if (last !== null) elapsed += (now - last) / 1000;
    last = now;
    var T = times[times.length - 1] || 1, t = elapsed % T, k = 0;
    while (k + 1 < times.length && times[k + 1] <= t) k++;
    view.frame = k; draw(); requestAnimationFrame(tick);
  }
  button.addEventListener("click", function () {
    view.playing = !view.playing; button.textContent = view.playing ? "Pause" : "Play";
    last = null; elapsed = times[view.frame]; if (view.playing) requestAnimationFrame(tick);
  });
  slider.addEventListener("input", function () { view.frame = parseInt(slider.value, 10); draw(); });
  var drag = null;
  canvas.addEventListener("mousedown", function (e) { drag = [e.clientX, e.clientY]; });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    view.yaw -= (e.clientX - drag[0]) * 0.01;
    view.pitch = Math.max(-1.5, Math.min(1.5, view.pitch + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY]; draw();
  });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault(); view.dist *= Math.exp(e.deltaY * 0.001); draw();
  }, {passive: false});
  if (times.length < 2) { button.disabled = true; slider.disabled = true; }
  window.mbcView = {draw: draw, view: view, setFrame: function (k) { view.frame = k; draw(); }};
  draw();
})();
