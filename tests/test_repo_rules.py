"""Architecture rules a linter cannot check: layering, CuPy isolation, test coverage of F.

DESIGN.md: imports point downwards only (models -> core, utils, transforms, datasets
(label names only); evaluators -> core, utils; datasets -> utils, transforms; utils and
transforms -> core.backend at most; core imports nothing else of cvzoo).
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'cvzoo'

# Which cvzoo subpackages each layer may import (besides itself and cvzoo.errors).
ALLOWED = {
    'core': {'core'},
    'utils': {'utils', 'core.backend'},
    'transforms': {'transforms', 'utils', 'core.backend'},
    'datasets': {'datasets', 'utils', 'transforms'},
    'evaluators': {'evaluators', 'core', 'utils'},
    # datasets: label-name modules only, see test_models_take_only_label_names_from_datasets
    'export': {'export', 'core'},
    'models': {'models', 'core', 'utils', 'transforms', 'datasets', 'export'},
    'testing': {'testing', 'core', 'utils', 'models', 'datasets', 'transforms', 'evaluators'},
    # the trainer above models/: nothing under models/ imports it
    'training': {'training', 'core', 'utils', 'transforms', 'datasets', 'evaluators', 'models'},
}
# Modules allowed to write to stdout: the command line.
PRINTING_ALLOWED = {'__main__.py', 'cli'}


def _modules():
    return sorted(p for p in PACKAGE.rglob('*.py'))


def _layer(path):
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def _cvzoo_imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            for alias in node.names:
                yield f'{node.module}.{alias.name}'


def _allowed(target, layer):
    if not target.startswith('cvzoo.') or target in ('cvzoo.errors',):
        return True
    rest = target[len('cvzoo.'):]
    if rest == 'errors' or rest.startswith('errors.'):
        return True
    return any(rest == allowed or rest.startswith(allowed + '.') for allowed in ALLOWED[layer])


@pytest.mark.parametrize('path', _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_downwards(path):
    layer = _layer(path)
    if layer not in ALLOWED:
        return
    tree = ast.parse(path.read_text(), str(path))
    bad = sorted({t for t in _cvzoo_imports(tree) if not _allowed(t, layer)
                  and not _is_name_import_of_allowed_module(t, layer)})
    assert not bad, f'{path.relative_to(ROOT)} ({layer}) imports {bad}'


def _is_name_import_of_allowed_module(target, layer):
    # `from cvzoo.core import backend` yields 'cvzoo.core' and 'cvzoo.core.backend';
    # the bare package name is fine when one of its allowed modules is what is imported.
    rest = target[len('cvzoo.'):] if target.startswith('cvzoo.') else target
    return any(allowed.startswith(rest + '.') for allowed in ALLOWED[layer])


def _imported_names(tree):
    """Every full name a module imports (``from P import n`` gives ``P.n``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from (f'{node.module}.{alias.name}' for alias in node.names)


def _is_label_names(name):
    # NOTE: keypoint names (coco_keypoint_names) name a model's outputs as label names do.
    return any(part.endswith(('_label_names', '_keypoint_names')) for part in name.split('.'))


@pytest.mark.parametrize('path', [p for p in _modules() if _layer(p) == 'models'],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_models_take_only_label_names_from_datasets(path):
    """DESIGN.md: models take label names from cvzoo.datasets and nothing else (the choice
    of a dataset by name lives in cvzoo.datasets.registry, used by the scripts)."""
    tree = ast.parse(path.read_text(), str(path))
    bad = sorted(name for name in _imported_names(tree)
                 if name.startswith('cvzoo.datasets') and not _is_label_names(name))
    assert not bad, f'{path.relative_to(ROOT)} imports {bad} from cvzoo.datasets'


def test_label_names_rule_can_fail():
    tree = ast.parse('from cvzoo.datasets import VOCBboxDataset\n'
                     'from cvzoo.datasets.voc import voc_label_names\n')
    names = [name for name in _imported_names(tree) if not _is_label_names(name)]
    assert names == ['cvzoo.datasets.VOCBboxDataset']


# the backend imports CuPy; the stand-ins play CuPy and cuDNN in tests; the GPU's own
# machinery, which has no CPU twin, drives CuPy's streams, graphs, pools and handles
CUPY_ALLOWED = (
    PACKAGE / 'core' / 'backend.py', PACKAGE / 'testing' / 'cupy_stand_in.py',
    PACKAGE / 'testing' / 'cudnn_stand_in.py', PACKAGE / 'core' / 'cuda_graph.py',
    PACKAGE / 'core' / 'device_random.py', *sorted((PACKAGE / 'core' / 'cudnn').glob('*.py')))


def test_only_backend_mentions_cupy():
    offenders = [
        str(p.relative_to(ROOT)) for p in _modules()
        if 'cupy' in p.read_text() and p not in CUPY_ALLOWED
    ]
    assert not offenders, ('only cvzoo/core/backend.py and the GPU-only machinery may '
                           f'mention cupy: {offenders}')


def test_no_print_in_library_code():
    offenders = []
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in PRINTING_ALLOWED:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'print':
                offenders.append(f'{rel}:{node.lineno}')
    assert not offenders, f'print() in library code (use the progress helper or logging): {offenders}'


def _exported_function_modules():
    tree = ast.parse((PACKAGE / 'core' / 'functions' / '__init__.py').read_text())
    modules = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.module.endswith('functions'):
            parts = node.module.split('.')
            if len(parts) == 5:  # cvzoo.core.functions.<family>.<module>
                modules.add((parts[3], parts[4]))
    return sorted(modules)


@pytest.mark.parametrize('family, module', _exported_function_modules(),
                         ids=lambda x: str(x))
def test_every_exported_function_module_has_a_test_file(family, module):
    tests = ROOT / 'tests' / 'core' / 'functions' / family
    candidates = [tests / f'test_{module}.py'] + list(tests.glob(f'test_{module}*.py'))
    assert any(c.exists() for c in candidates), f'no tests/core/functions/{family}/test_{module}.py'


def test_tests_import_their_helpers():
    """Test helpers are modules of tests.helpers, imported normally; only
    tests/helpers/scripts.py loads files by path (scripts and bench programs)."""
    loaders = sorted(str(path.relative_to(ROOT)) for path in (ROOT / 'tests').rglob('*.py')
                     if 'spec_from_file_location' in path.read_text()
                     and path != ROOT / 'tests' / 'helpers' / 'scripts.py'
                     and path != pathlib.Path(__file__).resolve())
    assert not loaders, f'load helpers through tests.helpers instead: {loaders}'


# Packages cvzoo and its tests may use only when present: the README's install
# (pip install -e '.[test]') brings none of them.
OPTIONAL_PACKAGES = ('torch', 'torchvision', 'chainer', 'chainercv', 'mpi4py', 'cupy', 'cupyx')


def test_collection_needs_no_optional_package():
    """The README's test command collects on a machine without torch, ChainerCV, mpi4py
    or CuPy: no test, helper or doctest module imports one at import time (each test
    that needs one imports it inside, through pytest.importorskip)."""
    import os
    import subprocess
    import sys

    blocker = ('import sys\n'
               f'for name in {OPTIONAL_PACKAGES!r}:\n'
               '    sys.modules[name] = None\n'
               'import pytest\n'
               "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider',"
               " '--fake-cuda']))\n")
    env = {k: v for k, v in os.environ.items() if k != 'CVZOO_SKIP_REPORT'}
    done = subprocess.run([sys.executable, '-c', blocker], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)
    errors = [line for line in done.stdout.splitlines() if line.startswith('ERROR ')]
    assert done.returncode == 0, 'collection fails without the optional packages:\n' + (
        '\n'.join(errors) or done.stdout[-3000:])


# The layout of cvzoo/models (docs/adding_a_model.md). Its root holds the registry and the
# zoo, the weight machinery (weights/), the parts shared by families of different folders
# (common/) and one folder per task; a task folder holds the task's base classes and the
# parts its families share (its own modules), and one folder per family.
MODELS = PACKAGE / 'models'
TASKS = ('classification', 'detection', 'segmentation', 'instance_segmentation',
         'keypoint_detection')
MODELS_ROOT = {'__init__.py', 'registry.py', 'zoo.py', 'discovery.py', 'weights', 'common',
               *TASKS,
               # NOTE: until cvzoo.training replaces it (issue #25)
               'train_mask_rcnn.py'}
# Folders under a task that register no model: the task's shared parts, like its modules.
TASK_LEVEL_FOLDERS = {
    'detection/darknet': 'the Darknet runtime (cfg networks, DarknetDetector, losses) '
                         'that every YOLO of detection/yolo stands on',
}
# Classifier networks any task may build on as a backbone (with their weight names).
BACKBONES = ('cvzoo.models.classification.resnet.resnet',
             'cvzoo.models.classification.resnet.name_mapping',
             'cvzoo.models.classification.vgg.vgg16',
             'cvzoo.models.classification.mobilenet.mobilenet_v3')
# Tasks whose models hold a box detector: they may import anything of detection/.
STANDS_ON = {'instance_segmentation': ('detection',), 'keypoint_detection': ('detection',)}


def test_models_root_holds_only_the_zoo_and_its_packages():
    entries = {p.name for p in MODELS.iterdir() if p.name != '__pycache__'}
    assert entries <= MODELS_ROOT, (
        f'cvzoo/models/ holds {sorted(entries - MODELS_ROOT)}: weight machinery belongs in '
        'models/weights/, parts several families share in models/common/, a model in its '
        "task's folder")


def _folder(module):
    """'task/family' for a module of a family folder, 'task' for one of a task's own
    modules or of a task-level folder, else the models/ subpackage ('common', 'weights',
    '' for the root) of a dotted cvzoo.models name."""
    parts = module.split('.')[2:]
    if not parts or parts[0] not in TASKS:
        return parts[0] if len(parts) > 1 else ''
    if len(parts) > 2 and (MODELS / parts[0] / parts[1]).is_dir():
        family = f'{parts[0]}/{parts[1]}'
        return parts[0] if family in TASK_LEVEL_FOLDERS else family
    return parts[0]


def _models_import_allowed(source, target):
    """May a module of folder ``source`` (see _folder) import the module ``target``?"""
    folder = _folder(target)
    if folder in ('', 'common', 'weights') or folder == source:
        return True
    task = source.split('/')[0]
    if folder == task or folder.split('/')[0] in STANDS_ON.get(task, ()):
        return True
    return any(target == b or target.startswith(b + '.') for b in BACKBONES)


def _models_modules():
    return sorted(p for task in TASKS for p in (MODELS / task).rglob('*.py'))


# NOTE: Keypoint R-CNN's train chain takes Mask R-CNN's matching of RoIs to boxes; the
# R-CNNs built by composition move it to detection/ (issue #25). Strict: remove the entry
# once it passes.
PENDING = {MODELS / 'keypoint_detection' / 'keypoint_rcnn_train_chain.py':
           'imports instance_segmentation/mask_rcnn until the R-CNN composition lands'}


def _family_rule_cases():
    return [pytest.param(path, marks=pytest.mark.xfail(strict=True, reason=PENDING[path]))
            if path in PENDING else path for path in _models_modules()]


def _module_name(path):
    return '.'.join(path.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__')


def _models_imports(tree):
    """The cvzoo.models modules a module imports (``from P import m`` gives P.m when m is
    a module or package, else P), in function bodies too."""
    for name in _imported_names(tree):
        if not name.startswith('cvzoo.models.'):
            continue
        path = ROOT / name.replace('.', '/')
        if not (path.with_suffix('.py').exists() or path.is_dir()):
            name = name.rpartition('.')[0]
        yield name


@pytest.mark.parametrize('path', _family_rule_cases(), ids=lambda p: str(p.relative_to(ROOT)))
def test_families_import_no_other_family(path):
    """A family folder imports another family's only through models/common/ or its task's
    own modules; instance segmentation and keypoint detection stand on detection/, and any
    task may use a classifier of BACKBONES. The folders' import graph has no cycle."""
    source = _folder(_module_name(path))
    tree = ast.parse(path.read_text(), str(path))
    bad = sorted({t for t in _models_imports(tree) if not _models_import_allowed(source, t)})
    assert not bad, (f'{path.relative_to(ROOT)} ({source}) imports {bad}: move what two '
                     'families share to models/common/ (or to their task folder)')


def test_family_rule_can_fail():
    assert not _models_import_allowed('detection/faster_rcnn',
                                      'cvzoo.models.detection.retinanet.heads')
    assert not _models_import_allowed('detection', 'cvzoo.models.detection.ssd.ssd')
    assert not _models_import_allowed('keypoint_detection',
                                      'cvzoo.models.instance_segmentation.mask_rcnn.mask_head')
    assert not _models_import_allowed('classification/vgg',
                                      'cvzoo.models.classification.resnet.se_resnet')
    assert not _models_import_allowed('detection', 'cvzoo.models.instance_segmentation.fcis')
    assert _models_import_allowed('instance_segmentation/mask_rcnn',
                                  'cvzoo.models.detection.faster_rcnn.train_chain')
    assert _models_import_allowed('detection/yolo', 'cvzoo.models.detection.darknet.cfg_network')


@pytest.mark.parametrize('folder', sorted(TASK_LEVEL_FOLDERS))
def test_task_level_folders_register_no_model(folder):
    from cvzoo.models import list_models, registry

    package = 'cvzoo.models.' + folder.replace('/', '.') + '.'
    registered = [name for name in list_models()
                  if registry.get_model_class(name).__module__.startswith(package)]
    assert not registered, f'{folder} is shared by its task and registers {registered}'


def test_models_folders_import_graph_has_no_cycle():
    graph = {}
    for path in _models_modules() + sorted((MODELS / 'common').rglob('*.py')):
        source = _folder(_module_name(path))
        targets = {_folder(t) for t in _models_imports(ast.parse(path.read_text()))}
        graph.setdefault(source, set()).update(targets - {source, '', 'weights'})
    done, path = set(), []

    def visit(node):
        if node in path:
            raise AssertionError('import cycle: ' + ' -> '.join(path[path.index(node):] + [node]))
        if node in done:
            return
        path.append(node)
        for target in sorted(graph.get(node, ())):
            visit(target)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        visit(node)
